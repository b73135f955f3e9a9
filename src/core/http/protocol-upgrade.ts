// Which protocol changes gatehouse judges (docs/proxy.md, docs/forward-auth.md). A request
// that asks to switch protocols (`Upgrade`) is judged as one only when it is a WebSocket
// handshake: a GET naming that one protocol (RFC 6455 §4.1; a list could let the app pick
// another). Anything else, `Upgrade: h2c` in any spelling above all, must never reach the app as
// an upgrade: an app that agreed to HTTP/2 over cleartext would hand the client a connection on
// which every later request, to any path and with any identity headers, passes beside the
// decision (h2c smuggling). Each host applies this rule its own way: the sidecar serves such a
// request as an ordinary one with the `Upgrade` header stripped; the verify endpoint, which cannot
// change what a web server passes on, refuses it.
import type { RequestView } from './request-view.js';

/**
 * What a request asks of its protocol: nothing (`none`), a WebSocket handshake the core judges as
 * one (`websocket`), or another upgrade that must not reach the app as one (`other`).
 */
export type UpgradeKind = 'none' | 'websocket' | 'other';

/** What a refused upgrade is told, by every host that refuses one. */
export const UPGRADE_REFUSED_MESSAGE =
  'Only WebSocket upgrades are supported: send this request without the Upgrade header.';

/**
 * The kind of upgrade a request asks for. `upgrade` is its `Upgrade` header (several joined with
 * ", ", as node joins them), undefined when it has none; present at all, even empty, it is an
 * upgrade request, whatever its `Connection` header says: some servers switch on `Upgrade` alone.
 */
export function upgradeKind(method: string, upgrade: string | undefined): UpgradeKind {
  if (upgrade === undefined) return 'none';
  return method === 'GET' && upgrade.trim().toLowerCase() === 'websocket' ? 'websocket' : 'other';
}

/** upgradeKind for a request as a host tells the core of it: every `Upgrade` header it carries, in any case. */
export function upgradeKindOf(view: Pick<RequestView, 'method' | 'headers'>): UpgradeKind {
  let upgrade: string | undefined;
  for (const [name, value] of view.headers) {
    if (name.length !== 7 || name.toLowerCase() !== 'upgrade') continue;
    upgrade = upgrade === undefined ? value : `${upgrade}, ${value}`;
  }
  return upgradeKind(view.method, upgrade);
}
