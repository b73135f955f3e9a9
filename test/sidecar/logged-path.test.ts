import type { IncomingMessage } from 'node:http';

import { expect } from 'chai';

import { loggedPath } from '../../src/sidecar/logged-path.js';

const path = (url: string) => loggedPath({ url } as IncomingMessage);

describe('the path a log line names', () => {
  it('leaves out the query and a fragment, which may carry codes or tokens', () => {
    expect(path('/.auth/login/dev/callback?code=secret&state=s')).to.equal('/.auth/login/dev/callback');
    expect(path('/public/cb#access_token=SECRETTOKEN')).to.equal('/public/cb');
    expect(path('/a#b?c')).to.equal('/a');
  });

  it('of a target still in absolute form, names only its path: never its authority, which may hold credentials', () => {
    expect(path('http://alice:S3cretPass@evil.example/x?y=1')).to.equal('/x');
    expect(path('https://host')).to.equal('');
    expect(path('*')).to.equal('');
  });
});
