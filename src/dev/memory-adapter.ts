// Where the development provider keeps what oidc-provider stores (sessions, interactions, grants,
// codes, tokens): in this process's memory, gone when it stops, like the provider's keys and users.
// oidc-provider's built-in memory adapter would do the same, but it announces at every start, in
// red, that it MUST be replaced: `gatehouse dev` users (and every test run, once per provider)
// would take that for a fault of theirs. Bounded: past the limit the oldest entries go first.
import type { Adapter, AdapterFactory, AdapterPayload } from 'oidc-provider';

/** Enough for a long `gatehouse dev` session or a test run; a dev provider's entries are a few KB each. */
export const DEV_STORAGE_MAX_ENTRIES = 10_000;

interface Entry {
  readonly model: string;
  readonly payload: AdapterPayload;
  /** ms since epoch; Infinity for what oidc-provider gives no lifetime. */
  readonly expiresAt: number;
}

/**
 * One store for every model of one provider, handed to oidc-provider as `adapter`. Entries live
 * `expiresIn` seconds plus the provider's clock tolerance (oidc-provider itself still checks each
 * token's own expiry, with that tolerance, so they must be findable that long).
 */
export function memoryAdapter(
  clockToleranceSeconds: number,
  now: () => number = Date.now,
  maxEntries = DEV_STORAGE_MAX_ENTRIES,
): AdapterFactory {
  const entries = new Map<string, Entry>();
  /** Secondary lookups (a session by its uid, a device code by its user code): lookup key → entry key. */
  const lookups = new Map<string, string>();
  const entryKey = (model: string, id: string) => `${model}\u0000${id}`;
  const lookupKey = (model: string, field: 'uid' | 'userCode', value: string) => `${model}\u0000${field}\u0000${value}`;
  const lookupKeys = (model: string, payload: AdapterPayload): string[] =>
    (['uid', 'userCode'] as const).flatMap((field) =>
      payload[field] === undefined ? [] : [lookupKey(model, field, payload[field])],
    );

  const remove = (key: string): void => {
    const entry = entries.get(key);
    if (entry === undefined) return;
    entries.delete(key);
    for (const lookup of lookupKeys(entry.model, entry.payload))
      if (lookups.get(lookup) === key) lookups.delete(lookup);
  };
  const live = (key: string | undefined): AdapterPayload | undefined => {
    if (key === undefined) return undefined;
    const entry = entries.get(key);
    if (entry !== undefined && entry.expiresAt <= now()) {
      remove(key);
      return undefined;
    }
    return entry?.payload;
  };

  return (model: string): Adapter => ({
    async upsert(id, payload, expiresIn) {
      const key = entryKey(model, id);
      remove(key); // re-inserted as the newest, with its lookups as they are now
      entries.set(key, {
        model,
        payload,
        expiresAt:
          expiresIn === undefined ? Number.POSITIVE_INFINITY : now() + (expiresIn + clockToleranceSeconds) * 1000,
      });
      for (const lookup of lookupKeys(model, payload)) lookups.set(lookup, key);
      while (entries.size > maxEntries) remove(entries.keys().next().value as string);
    },
    async find(id) {
      return live(entryKey(model, id));
    },
    async findByUid(uid) {
      return live(lookups.get(lookupKey(model, 'uid', uid)));
    },
    async findByUserCode(userCode) {
      return live(lookups.get(lookupKey(model, 'userCode', userCode)));
    },
    async consume(id) {
      // Kept, marked: a code or refresh token used twice is how oidc-provider detects a replay.
      const payload = live(entryKey(model, id));
      if (payload !== undefined) payload.consumed = Math.floor(now() / 1000);
    },
    async destroy(id) {
      remove(entryKey(model, id));
    },
    async revokeByGrantId(grantId) {
      // oidc-provider calls this on each model's adapter in turn; each removes its own.
      for (const [key, entry] of entries) if (entry.model === model && entry.payload.grantId === grantId) remove(key);
    },
  });
}
