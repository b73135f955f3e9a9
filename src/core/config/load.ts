// Where the authsettingsV2 document comes from: --config <file>, else the
// whole JSON in GATEHOUSE_AUTH_CONFIG_JSON (or WEBSITE_AUTH_V2_CONFIG_JSON).
import { readFileSync } from 'node:fs';

import { AuthConfigError, resolveAuthConfig, type ResolvedConfig } from './auth-config.js';

export const CONFIG_VARIABLES = ['GATEHOUSE_AUTH_CONFIG_JSON', 'WEBSITE_AUTH_V2_CONFIG_JSON'] as const;

function parseJson(text: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new AuthConfigError([`${source}: not valid JSON (${(error as Error).message.replace(/".*"/s, '…')})`]);
  }
}

export function loadAuthConfig(configFile: string | undefined, env: NodeJS.ProcessEnv = process.env): ResolvedConfig & { source: string } {
  if (configFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(configFile, 'utf8');
    } catch (error) {
      throw new AuthConfigError([`${configFile}: cannot read (${(error as NodeJS.ErrnoException).code ?? 'error'})`]);
    }
    return { ...resolveAuthConfig(parseJson(text, configFile), env), source: configFile };
  }
  for (const variable of CONFIG_VARIABLES) {
    const text = env[variable];
    if (text !== undefined && text !== '') return { ...resolveAuthConfig(parseJson(text, variable), env), source: variable };
  }
  throw new AuthConfigError([`no configuration: pass --config <file> or set ${CONFIG_VARIABLES.join(' or ')}`]);
}
