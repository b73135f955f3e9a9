// Where the authsettingsV2 document comes from: --config <file>, else the
// whole JSON in GATEHOUSE_AUTH_CONFIG_JSON (or WEBSITE_AUTH_V2_CONFIG_JSON).
import { readFileSync } from 'node:fs';

import { AuthConfigError, resolveAuthConfig, type ResolvedConfig } from './auth-config.js';

export const CONFIG_VARIABLES = ['GATEHOUSE_AUTH_CONFIG_JSON', 'WEBSITE_AUTH_V2_CONFIG_JSON'] as const;

/** A byte order mark, as Windows editors and PowerShell 5's `Set-Content -Encoding UTF8` write at the start of a file: no part of the JSON. */
const BYTE_ORDER_MARK = '\ufeff';

/** Where `position` (an index into `text`) is, counted as editors count it: line and column from 1. */
function lineAndColumn(text: string, position: number): string {
  const lineStart = text.lastIndexOf('\n', position - 1) + 1;
  let line = 1;
  for (let at = text.indexOf('\n'); at !== -1 && at < lineStart; at = text.indexOf('\n', at + 1)) line += 1;
  return `line ${line} column ${position - lineStart + 1}`;
}

/** Why `text` is not JSON: the parser's reason without the text it quotes (a secret may be in it), and where. */
function jsonProblem(text: string, error: Error): string {
  if (text.trim() === '') return 'empty: expected a JSON object';
  let reason = error.message.replace(/".*"/s, '…');
  // Node 22 and later add the line and column themselves; Node 20 gives the position alone.
  const position = /at position (\d+)/.exec(reason);
  if (position !== null && !/\(line \d+ column \d+\)/.test(reason))
    reason += ` (${lineAndColumn(text, Number(position[1]))})`;
  return `not valid JSON (${reason})`;
}

function parseJson(raw: string, source: string): unknown {
  const text = raw.startsWith(BYTE_ORDER_MARK) ? raw.slice(BYTE_ORDER_MARK.length) : raw;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new AuthConfigError([`${source}: ${jsonProblem(text, error as Error)}`]);
  }
}

/** The other sources that are set but lose to `chosen`: said, so that nobody edits the one that is not read. */
function ignoredSources(chosen: string, env: NodeJS.ProcessEnv): string[] {
  return CONFIG_VARIABLES.filter(
    (variable) => variable !== chosen && env[variable] !== undefined && env[variable] !== '',
  );
}

/** The document in `text` from `source`, resolved; its problems say where it came from, and which sources were passed over. */
function resolveFrom(text: string, source: string, env: NodeJS.ProcessEnv): ResolvedConfig & { source: string } {
  const document = parseJson(text, source);
  const ignored = ignoredSources(source, env);
  try {
    const resolved = resolveAuthConfig(document, env);
    const notes = ignored.map(
      (variable) => `${variable} is set too, and ignored: the configuration is read from ${source}`,
    );
    return { ...resolved, warnings: [...notes, ...resolved.warnings], source };
  } catch (error) {
    if (!(error instanceof AuthConfigError)) throw error;
    const passedOver =
      ignored.length > 0 ? ` (${ignored.join(' and ')} ${ignored.length > 1 ? 'are' : 'is'} set too, and ignored)` : '';
    throw new AuthConfigError(error.problems, error.warnings, `from ${source}${passedOver}`);
  }
}

export function loadAuthConfig(
  configFile: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): ResolvedConfig & { source: string } {
  if (configFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(configFile, 'utf8');
    } catch (error) {
      throw new AuthConfigError([`${configFile}: cannot read (${(error as NodeJS.ErrnoException).code ?? 'error'})`]);
    }
    return resolveFrom(text, configFile, env);
  }
  for (const variable of CONFIG_VARIABLES) {
    const text = env[variable];
    if (text !== undefined && text !== '') return resolveFrom(text, variable, env);
  }
  throw new AuthConfigError([`no configuration: pass --config <file> or set ${CONFIG_VARIABLES.join(' or ')}`]);
}
