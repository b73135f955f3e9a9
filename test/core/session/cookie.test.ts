import { randomBytes } from 'node:crypto';

import { expect } from 'chai';

import { newSessionId, signSessionId } from '../../../src/core/crypto/session-id.js';
import { MAX_SESSION_COOKIES_CHECKED, SessionCookie } from '../../../src/core/session/cookie.js';

const NAME = 'PlatformAuthSession';
const key = randomBytes(32);
const now = 1_800_000_000_000;

function cookieOf(name = NAME): SessionCookie {
  return new SessionCookie(name, key, () => now);
}

/** A request carrying these Cookie headers (and an unrelated header). */
function request(...cookieHeaders: string[]) {
  return { headers: [['Accept', 'text/html'] as const, ...cookieHeaders.map((value) => ['Cookie', value] as const)] };
}

describe('the session cookie (session/cookie.ts)', () => {
  const id = newSessionId();
  const value = signSessionId(key, id);

  describe('reading', () => {
    it('finds the session id among the other cookies, in any Cookie header', () => {
      const cookie = cookieOf();
      expect(cookie.read(request(`${NAME}=${value}`))).to.deep.equal({ state: 'valid', id });
      expect(cookie.read(request(`a=1; ${NAME}=${value}; b=2`))).to.deep.equal({ state: 'valid', id });
      expect(cookie.read(request('a=1', `b=2;  ${NAME} = ${value} ;c=3`))).to.deep.equal({ state: 'valid', id });
      expect(cookie.read({ headers: [['cOOKIE', `${NAME}=${value}`]] })).to.deep.equal({ state: 'valid', id });
    });

    it('is absent without a cookie of exactly its name', () => {
      const cookie = cookieOf();
      expect(cookie.read(request())).to.deep.equal({ state: 'absent' });
      expect(cookie.read(request('a=1; b=2'))).to.deep.equal({ state: 'absent' });
      // Names that merely contain the name, carrying a valid value: none of them is the session cookie.
      for (const other of [`X${NAME}`, `${NAME}Login_abc`, `${NAME}2`, NAME.toLowerCase(), `__Host-${NAME}`]) {
        expect(cookie.read(request(`${other}=${value}`)), other).to.deep.equal({ state: 'absent' });
      }
      // The name alone, without '=', is no cookie; nor is the value of another cookie that spells it.
      expect(cookie.read(request(NAME))).to.deep.equal({ state: 'absent' });
      expect(cookie.read(request(`a=${NAME}=${value}`))).to.deep.equal({ state: 'absent' });
      expect(cookie.read({ headers: [[`X-${NAME}`, value]] })).to.deep.equal({ state: 'absent' });
    });

    it('is invalid when malformed', () => {
      const cookie = cookieOf();
      for (const bad of [
        '',
        'garbage',
        id,
        `${id}.`,
        `.${value.split('.')[1]}`,
        `"${value}"`,
        `${value}.${value.split('.')[1]}`,
        value.replace('.', '..'),
        `${value.slice(0, 20)} ${value.slice(21)}`,
        Buffer.from(value).toString('base64url'),
      ]) {
        expect(cookie.read(request(`${NAME}=${bad}`)), bad).to.deep.equal({ state: 'invalid' });
      }
    });

    it('is invalid when oversized', () => {
      const cookie = cookieOf();
      expect(cookie.read(request(`${NAME}=${value}${'A'.repeat(8000)}`))).to.deep.equal({ state: 'invalid' });
      expect(cookie.read(request(`${NAME}=${'A'.repeat(8000)}.${value.split('.')[1]}`))).to.deep.equal({
        state: 'invalid',
      });
    });

    it('is invalid under a wrong signature', () => {
      const cookie = cookieOf();
      const [own, mac] = value.split('.') as [string, string];
      expect(cookie.read(request(`${NAME}=${signSessionId(randomBytes(32), id)}`))).to.deep.equal({
        state: 'invalid',
      });
      expect(cookie.read(request(`${NAME}=${newSessionId()}.${mac}`))).to.deep.equal({ state: 'invalid' });
      const flipped = `${own}.${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`;
      expect(cookie.read(request(`${NAME}=${flipped}`))).to.deep.equal({ state: 'invalid' });
      // A value that verified before is remembered; its forged twin still is not taken.
      expect(cookie.read(request(`${NAME}=${value}`))).to.deep.equal({ state: 'valid', id });
      expect(cookie.read(request(`${NAME}=${flipped}`))).to.deep.equal({ state: 'invalid' });
      // Another deployment's key (the same name) does not verify here.
      expect(new SessionCookie(NAME, randomBytes(32)).read(request(`${NAME}=${value}`))).to.deep.equal({
        state: 'invalid',
      });
    });

    it('takes the first that verifies when duplicated, within a bound', () => {
      const cookie = cookieOf();
      const second = newSessionId();
      const other = signSessionId(key, second);
      const forged = signSessionId(randomBytes(32), newSessionId());
      expect(cookie.read(request(`${NAME}=${value}; ${NAME}=${other}`))).to.deep.equal({ state: 'valid', id });
      expect(cookie.read(request(`${NAME}=${other}`, `${NAME}=${value}`))).to.deep.equal({
        state: 'valid',
        id: second,
      });
      // A stale or planted one sent first does not hide the browser's own session.
      expect(cookie.read(request(`${NAME}=${forged}; ${NAME}=${value}`))).to.deep.equal({ state: 'valid', id });
      expect(cookie.read(request(`${NAME}=junk`, `${NAME}=${value}`))).to.deep.equal({ state: 'valid', id });
      expect(cookie.read(request(`${NAME}=junk; ${NAME}=${forged}`))).to.deep.equal({ state: 'invalid' });
      // Past the bound, the rest is not looked at.
      const many = Array.from({ length: MAX_SESSION_COOKIES_CHECKED }, () => `${NAME}=junk`).join('; ');
      expect(cookie.read(request(`${many}; ${NAME}=${value}`))).to.deep.equal({ state: 'invalid' });
      const fewer = Array.from({ length: MAX_SESSION_COOKIES_CHECKED - 1 }, () => `${NAME}=junk`).join('; ');
      expect(cookie.read(request(`${fewer}; ${NAME}=${value}`))).to.deep.equal({ state: 'valid', id });
    });
  });

  describe('setting and clearing', () => {
    it('sets the signed id, HttpOnly, Path=/, SameSite=Lax, for the rest of the session', () => {
      const set = cookieOf().set(id, now + 3_600_500, false);
      expect(set).to.equal(`${NAME}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=3600`);
      expect(cookieOf().read(request(set.split(';')[0]!))).to.deep.equal({ state: 'valid', id });
      expect(cookieOf().set(id, now - 1000, false)).to.include('; Max-Age=0');
    });

    it('is Secure on https, and always for a __Secure- or __Host- name', () => {
      expect(
        cookieOf()
          .set(id, now + 60_000, true)
          .split('; '),
      ).to.include('Secure');
      expect(
        cookieOf()
          .set(id, now + 60_000, false)
          .split('; '),
      ).not.to.include('Secure');
      for (const name of ['__Host-Session', '__secure-Session']) {
        const cookie = cookieOf(name);
        expect(cookie.requiresHttps).to.equal(true);
        expect(cookie.set(id, now + 60_000, false).split('; ')).to.include('Secure');
        expect(cookie.clear(false).split('; ')).to.include('Secure');
      }
      expect(cookieOf().requiresHttps).to.equal(false);
    });

    it('clears with an empty value that has expired', () => {
      expect(cookieOf().clear(true)).to.equal(
        `${NAME}=; Path=/; HttpOnly; SameSite=Lax; Secure; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT`,
      );
    });
  });
});
