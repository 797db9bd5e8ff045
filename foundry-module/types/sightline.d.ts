/**
 * Declaration merging that tells fvtt-types about this module: its settings, its API on
 * `game.modules.get("sightline-bridge")`, and the hooks it calls.
 */
export {};

interface SightlineApi {
  adjudicate(actor: unknown, target: unknown, options?: { action?: string; log?: boolean; reaction?: boolean; aware?: boolean; scene?: string }): Promise<any>;
  preview(actor: unknown, target: unknown, options?: { action?: string }): Promise<any>;
  sync(): Promise<void>;
  status(): { state: string; error: { code: string; message: string; details?: object } | null };
  editTraits(tokenDoc: unknown): Promise<unknown>;
  editScene(scene?: unknown): Promise<unknown>;
  toggleOverlay(on?: boolean): unknown;
  startSession(name?: string): Promise<any>;
  endSession(): Promise<any>;
  overrideRuling(record: string, override: { allowed: boolean; modifier?: number | null; reason: string }): Promise<{ record: string; original: string }>;
}

declare global {
  interface SettingConfig {
    "sightline-bridge.bridgeUrl": string;
    "sightline-bridge.secret": string;
    "sightline-bridge.ruleset": string;
    "sightline-bridge.edition": string;
    "sightline-bridge.applyMode": string;
    "sightline-bridge.adjudicateOnRoll": boolean;
    "sightline-bridge.previewOnTarget": boolean;
    "sightline-bridge.overlayEnabled": boolean;
    "sightline-bridge.overlayAllTokens": boolean;
    "sightline-bridge.prerollPrompt": boolean;
  }

  interface ModuleConfig {
    "sightline-bridge": { api: SightlineApi };
  }

  interface RequiredModules {
    "sightline-bridge": true;
  }

}

declare module "fvtt-types/configuration" {
  namespace Hooks {
    interface HookConfig {
      "sightline.status": (status: { state: string; error: { code: string; message: string; details?: object } | null }) => void;
      "sightline.adjudicated": (ruling: any, context: any) => void;
    }
  }
}
