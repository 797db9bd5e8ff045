/**
 * Validation of produced messages against the bridge's exported JSON Schema
 * (`schema/protocol-v1.schema.json` at the repository root, pydantic output, draft 2020-12).
 * When the file is absent the helper says so and the checks are skipped, never faked.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import Ajv2020 from "ajv/dist/2020.js";

const here = dirname(fileURLToPath(import.meta.url));
export const SCHEMA_PATH = process.env.SIGHTLINE_SCHEMA ?? resolve(here, "../../../schema/protocol-v1.schema.json");

let compiled = null;

/** Why schema checks are skipped, or false when the schema is there. */
export function schemaSkipReason() {
  return existsSync(SCHEMA_PATH) ? false : `bridge schema not found at ${SCHEMA_PATH} (the lead commits it on main; merge main to enable)`;
}

/** The compiled validator (the whole message union). */
export function validator() {
  if (compiled) return compiled;
  const schema = JSON.parse(readFileSync(SCHEMA_PATH, "utf8"));
  // pydantic writes `discriminator.mapping`, which ajv's discriminator keyword refuses; the oneOf alone decides.
  const ajv = new Ajv2020.default({ allErrors: true, strict: false, discriminator: false });
  compiled = ajv.compile(schema);
  return compiled;
}

/** Assert a message conforms; the error lists every violation. */
export function assertConforms(message) {
  const validate = validator();
  if (!validate(message)) {
    throw new Error(`message does not conform to ${SCHEMA_PATH}:\n${JSON.stringify(validate.errors, null, 2)}\n${JSON.stringify(message, null, 2)}`);
  }
}
