// Types for scripts/test-requirements.mjs, which plain node runs before the type check.
export interface Requirement {
  what: string;
  path: string;
  also?: string[];
  env?: string;
  debian: string;
  script?: string;
}

export interface Probes {
  exists: (path: string) => boolean;
  env: Record<string, string | undefined>;
  isRoot: boolean;
  hasAptGet: boolean;
}

export interface Decision {
  action: 'ready' | 'install' | 'stop';
  missing: Requirement[];
  packages: string[];
  scripts: string[];
  overridden: Requirement[];
}

export const requirements: Requirement[];
export function placesOf(requirement: Requirement, env: Probes['env']): string[];
export function pathOf(requirement: Requirement, env: Probes['env']): string;
export function plan(list: Requirement[], probes: Probes): Decision;
export function installLine(packages: string[], isRoot: boolean): string;
export function installNotices(missing: Requirement[], context: string): string[];
export function stopMessage(
  decision: Decision,
  options: { env: Probes['env']; isRoot: boolean; context: string },
): string[];
export function aptGet(args: string[], env?: Probes['env']): boolean;
export function projectScript(script: string): boolean;
export function machineProbes(env?: Probes['env']): Probes;
export function ensurePrograms(
  list: Requirement[],
  options: {
    context: string;
    probes?: Probes;
    log?: (line: string) => void;
    install?: (args: string[]) => boolean;
    runScript?: (script: string) => boolean;
  },
): boolean;
