/**
 * Types the test stubs are held to (test/helpers/*.js are type-checked with the module, against
 * fvtt-types 13 and the vendored 14): a stand-in for a Foundry object may only use names the real
 * declaration has, so a stub that invents an API (a method, a field, a collection) fails the check.
 * Values are not checked — the stubs are shaped like stored data, not like full documents.
 */
export {};

declare global {
  /** Only the names of T (its own and inherited members), any values. */
  type StubOf<T> = { [K in keyof T]?: unknown };
}
