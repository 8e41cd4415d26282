/**
 * The project's own files (data/neighbourhoods, config/dispatch-profiles), found by walking up from the module
 * that needs them, so the same code works from src/ (tsx, vitest) and from dist/src/ (the build).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The first `<ancestor>/<relative>` holding `marker`, walking up from the module at `moduleUrl` (its
 * `import.meta.url`); undefined when none does within a few levels.
 */
export function findProjectDir(moduleUrl: string, relative: string, marker: string): string | undefined {
  let dir = dirname(fileURLToPath(moduleUrl));
  for (let level = 0; level < 8; level++) {
    const candidate = join(dir, relative);
    if (existsSync(join(candidate, marker))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
  return undefined;
}
