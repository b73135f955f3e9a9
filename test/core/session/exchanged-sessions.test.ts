// The memory of which session a token exchange made: bounded, shared by concurrent
// exchanges of one token, and never handing out a session that is no longer usable.
import { expect } from 'chai';

import { ExchangedSessions } from '../../../src/core/session/exchanged-sessions.js';
import { MemoryTokenStore } from '../../../src/core/token-store/memory.js';

describe('ExchangedSessions', () => {
  const key = (token: string, host = 'app.example') => ExchangedSessions.key('corp', host, { idToken: token });
  let made: string[];
  const make = (id: string) => async () => {
    made.push(id);
    return { id, session: { id } };
  };
  const usable = async (id: string) => ({ id });
  beforeEach(() => {
    made = [];
  });

  it('is keyed by everything exchanged, the provider and the host (in any case)', () => {
    expect(key('a')).to.equal(key('a', 'APP.example'));
    expect(key('a')).to.not.equal(key('b'));
    expect(key('a')).to.not.equal(key('a', 'other.example'));
    expect(ExchangedSessions.key('corp', 'h', { accessToken: 't', accessTokenSecret: 's1' })).to.not.equal(
      ExchangedSessions.key('corp', 'h', { accessToken: 't', accessTokenSecret: 's2' }),
    );
    expect(ExchangedSessions.key('corp', 'h', { idToken: 't' })).to.not.equal(
      ExchangedSessions.key('other', 'h', { idToken: 't' }),
    );
    // A field's value never moves into another field's place.
    expect(ExchangedSessions.key('corp', 'h', { idToken: 't' })).to.not.equal(
      ExchangedSessions.key('corp', 'h', { accessToken: 't' }),
    );
  });

  it('concurrent exchanges of one token share the one session being made', async () => {
    const sessions = new ExchangedSessions<{ id: string }>();
    const answers = await Promise.all(['s1', 's2', 's3'].map((id) => sessions.session(key('a'), usable, make(id))));
    expect(made).to.deep.equal(['s1']);
    expect(answers.map((a) => a.id)).to.deep.equal(['s1', 's1', 's1']);
  });

  it('a session that is no longer usable is replaced, and a failed make is not remembered', async () => {
    const sessions = new ExchangedSessions<{ id: string }>();
    await sessions.session(key('a'), usable, make('s1'));
    const replaced = await sessions.session(key('a'), async () => undefined, make('s2'));
    expect(replaced.id).to.equal('s2');
    expect((await sessions.session(key('a'), usable, make('s3'))).id).to.equal('s2');
    const failing = () => Promise.reject(new Error('disk full'));
    let error: unknown;
    await sessions.session(key('b'), usable, failing).catch((caught: unknown) => (error = caught));
    expect((error as Error).message).to.equal('disk full');
    expect((await sessions.session(key('b'), usable, make('s4'))).id).to.equal('s4');
  });

  it('remembers at most its bound, forgetting the oldest first', async () => {
    const sessions = new ExchangedSessions<{ id: string }>(2);
    for (const token of ['a', 'b', 'c']) await sessions.session(key(token), usable, make(`s-${token}`));
    expect(sessions.size).to.equal(2);
    await sessions.session(key('c'), usable, make('new-c'));
    await sessions.session(key('a'), usable, make('new-a'));
    expect(made).to.deep.equal(['s-a', 's-b', 's-c', 'new-a']);
  });

  it('with a shared store, an instance finds the session another made (until the session ends), and drops one no longer usable there too', async () => {
    const store = new MemoryTokenStore<{ readonly id: string }>();
    const shared = { store, expiresAt: () => Date.now() + 3_600_000 };
    const here = new ExchangedSessions<{ id: string }>(undefined, shared);
    const there = new ExchangedSessions<{ id: string }>(undefined, shared);
    await here.session(key('a'), usable, make('s1'));
    expect((await there.session(key('a'), usable, make('s2'))).id).to.equal('s1');
    expect(made).to.deep.equal(['s1']);
    // Signed out meanwhile: the next instance makes a new one, and the others find that one.
    expect((await there.session(key('a'), async () => undefined, make('s3'))).id).to.equal('s3');
    expect(
      (await new ExchangedSessions<{ id: string }>(undefined, shared).session(key('a'), usable, make('s4'))).id,
    ).to.equal('s3');
  });
});
