// The development provider's storage, on its own. The sign-in, refresh and logout tests run the
// real oidc-provider on it; these pin what they would only show as a failed sign-in.
import { expect } from 'chai';
import type { AdapterPayload } from 'oidc-provider';

import { memoryAdapter } from '../../src/dev/memory-adapter.js';

describe('the development provider’s in-memory storage', () => {
  let clock = 1_000_000;
  const now = () => clock;
  beforeEach(() => {
    clock = 1_000_000;
  });

  it('finds what was stored, per model, until its lifetime and the clock tolerance have passed', async () => {
    const adapter = memoryAdapter(15, now);
    const tokens = adapter('AccessToken');
    await tokens.upsert('a', { accountId: 'demo' }, 60);
    expect(await adapter('RefreshToken').find('a')).to.equal(undefined);
    clock += 74_999;
    expect(await tokens.find('a')).to.deep.equal({ accountId: 'demo' });
    clock += 1;
    expect(await tokens.find('a')).to.equal(undefined);
  });

  it('keeps what has no lifetime, and an upsert replaces the entry and its lifetime', async () => {
    const clients = memoryAdapter(0, now)('Client');
    await clients.upsert('c', { clientId: 'c' });
    await clients.upsert('t', { accountId: 'x' }, 1);
    await clients.upsert('t', { accountId: 'y' }, 100);
    clock += 50_000;
    expect(await clients.find('t')).to.deep.equal({ accountId: 'y' });
    clock += 10 * 365 * 86_400_000;
    expect(await clients.find('t')).to.equal(undefined);
    expect(await clients.find('c')).to.deep.equal({ clientId: 'c' });
  });

  it('finds a session by its uid and a code by its user code, and not once they are destroyed or replaced', async () => {
    const adapter = memoryAdapter(0, now);
    const sessions = adapter('Session');
    await sessions.upsert('s1', { uid: 'u1', accountId: 'demo' }, 3600);
    expect(await sessions.findByUid('u1')).to.deep.equal({ uid: 'u1', accountId: 'demo' });
    expect(await adapter('Interaction').findByUid('u1')).to.equal(undefined);
    await sessions.upsert('s1', { uid: 'u2', accountId: 'demo' }, 3600);
    expect(await sessions.findByUid('u1')).to.equal(undefined);
    expect(await sessions.findByUid('u2')).to.deep.equal({ uid: 'u2', accountId: 'demo' });
    await sessions.destroy('s1');
    expect(await sessions.findByUid('u2')).to.equal(undefined);
    expect(await sessions.find('s1')).to.equal(undefined);

    const codes = adapter('DeviceCode');
    await codes.upsert('d', { userCode: 'ABCD-EFGH' }, 600);
    expect(await codes.findByUserCode('ABCD-EFGH')).to.deep.equal({ userCode: 'ABCD-EFGH' });
    clock += 600_001;
    expect(await codes.findByUserCode('ABCD-EFGH')).to.equal(undefined);
  });

  it('marks a consumed code with the time, and keeps it: a second use is how a replay is recognised', async () => {
    const codes = memoryAdapter(0, now)('AuthorizationCode');
    await codes.upsert('c', { grantId: 'g' }, 60);
    clock += 30_000;
    await codes.consume('c');
    expect(await codes.find('c')).to.deep.equal({ grantId: 'g', consumed: 1030 });
    await codes.consume('nothing'); // gone already: nothing to mark, no error
  });

  it('revokes a grant in the model asked, and nothing of another grant or model', async () => {
    const adapter = memoryAdapter(0, now);
    const access = adapter('AccessToken');
    const refresh = adapter('RefreshToken');
    await access.upsert('a1', { grantId: 'g1' }, 60);
    await access.upsert('a2', { grantId: 'g1' }, 60);
    await access.upsert('a3', { grantId: 'g2' }, 60);
    await refresh.upsert('r1', { grantId: 'g1' }, 60);
    await access.revokeByGrantId('g1');
    expect(await access.find('a1')).to.equal(undefined);
    expect(await access.find('a2')).to.equal(undefined);
    expect(await access.find('a3')).to.deep.equal({ grantId: 'g2' });
    expect(await refresh.find('r1')).to.deep.equal({ grantId: 'g1' });
    await refresh.revokeByGrantId('g1');
    expect(await refresh.find('r1')).to.equal(undefined);
  });

  it('holds at most its limit: the oldest entries go first, with their lookups', async () => {
    const sessions = memoryAdapter(0, now, 3)('Session');
    for (const n of [1, 2, 3]) await sessions.upsert(`s${n}`, { uid: `u${n}` } satisfies AdapterPayload, 60);
    await sessions.upsert('s1', { uid: 'u1' }, 60); // written again: now the newest
    await sessions.upsert('s4', { uid: 'u4' }, 60);
    expect(await sessions.find('s2')).to.equal(undefined);
    expect(await sessions.findByUid('u2')).to.equal(undefined);
    for (const n of [1, 3, 4]) expect(await sessions.findByUid(`u${n}`)).to.deep.equal({ uid: `u${n}` });
  });
});
