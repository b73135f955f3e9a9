// The app's answer as the client receives it: the app's connection-specific headers stay on the
// app's hop (its `Connection`, its idle-timeout hint `Keep-Alive`, which undici reads for its own
// pool, and whatever private field its `Connection` header names). The framing and the client's
// `Connection` are node's to choose for the client's hop.
import type { OutgoingHttpHeaders } from 'node:http';

import { HOP_BY_HOP, namedByConnection } from './hop-by-hop.js';

/** The app's answer headers (lower-case names, as undici gives them) less its hop's own. */
export function appAnswerHeaders(source: Record<string, string | string[] | undefined>): OutgoingHttpHeaders {
  const connection = source.connection;
  const named = connection === undefined ? [] : namedByConnection(String(connection));
  const kept: OutgoingHttpHeaders = {};
  for (const name in source) {
    const value = source[name];
    if (value === undefined || HOP_BY_HOP.has(name) || (named.length > 0 && named.includes(name))) continue;
    kept[name] = value;
  }
  return kept;
}
