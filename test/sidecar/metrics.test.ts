// The metrics: what gatehouse counts while it serves real requests (a real
// provider, sign-in, refresh, logout, deliveries, the app down), what the
// listener answers, and what it never carries (users, paths).
import { expect } from 'chai';

import { GatehouseMetrics } from '../../src/metrics/gatehouse-metrics.js';
import { startMetricsListener, type MetricsListener } from '../../src/metrics/metrics-listener.js';
import { createLogger } from '../../src/logging.js';
import { Browser } from '../support/browser.js';
import { deliver, request, SECRET } from '../support/http.js';
import { sample } from '../support/prometheus.js';
import { signIn, startDeployment, type Deployment } from '../support/sign-in.js';

describe('metrics (Prometheus, prom-client)', function () {
  this.timeout(30_000);
  let deployment: Deployment;
  let metrics: GatehouseMetrics;
  let listener: MetricsListener;
  const text = () => metrics.registry.metrics();

  before(async () => {
    metrics = new GatehouseMetrics();
    deployment = await startDeployment({ metrics, webhookSecret: SECRET });
    listener = await startMetricsListener(
      '127.0.0.1',
      0,
      { contentType: metrics.registry.contentType, metrics: () => metrics.registry.metrics() },
      createLogger('silent'),
    );
  });
  after(async () => {
    await listener?.close();
    await deployment?.close();
  });

  it('counts each outcome: forwarded (signed in or anonymous), challenged, refused, and each /.auth route by name', async () => {
    const before = await text();
    const browser = new Browser();
    await signIn(browser, deployment, '/secret-path-marker');
    await browser.request(`${deployment.url}/private/one`);
    await new Browser().request(`${deployment.url}/public/x`);
    await new Browser().request(`${deployment.url}/private/two`, { headers: { accept: 'application/json' } });
    await browser.request(`${deployment.url}/.auth/me`);
    await request(deployment.url, { method: 'GET', path: '/x', headers: { host: 'bad host' } });
    const after = await text();
    const delta = (labels: Record<string, string>) =>
      sample(after, 'gatehouse_requests_total', labels) - sample(before, 'gatehouse_requests_total', labels);
    expect(delta({ outcome: 'forwarded', reason: 'signed_in' })).to.equal(2); // after the sign-in's return, and /private/one
    expect(delta({ outcome: 'forwarded', reason: 'anonymous' })).to.equal(1);
    expect(delta({ outcome: 'challenged', reason: 'sign_in' })).to.equal(1); // the first visit, redirected to sign in
    expect(delta({ outcome: 'challenged', reason: 'unauthorized' })).to.equal(1); // the API caller
    expect(delta({ outcome: 'refused', reason: 'bad_request' })).to.equal(1);
    expect(delta({ outcome: 'auth_route', reason: 'login' })).to.equal(1);
    expect(delta({ outcome: 'auth_route', reason: 'login_callback' })).to.equal(1);
    expect(delta({ outcome: 'auth_route', reason: 'me' })).to.equal(1);
  });

  it('counts the requests a web server asks /.auth/verify about, as the proxied ones, by their outcome', async () => {
    const browser = new Browser();
    await signIn(browser, deployment);
    const cookie = `PlatformAuthSession=${browser.cookie(deployment.url, 'PlatformAuthSession')!.value}`;
    const host = new URL(deployment.url).host;
    const ask = (uri: string, headers: Record<string, string> = {}) =>
      new Browser().request(`${deployment.url}/.auth/verify`, {
        headers: {
          'x-original-uri': uri,
          'x-original-method': 'GET',
          'x-forwarded-host': host,
          'x-forwarded-proto': 'http',
          ...headers,
        },
      });
    const before = await text();
    expect((await ask('/reports', { cookie })).status).to.equal(200);
    expect((await ask('/public/logo.png')).status).to.equal(200);
    expect((await ask('/reports', { accept: 'application/json' })).status).to.equal(401);
    const after = await text();
    const delta = (labels: Record<string, string>) =>
      sample(after, 'gatehouse_requests_total', labels) - sample(before, 'gatehouse_requests_total', labels);
    expect(delta({ outcome: 'forwarded', reason: 'signed_in' })).to.equal(1);
    expect(delta({ outcome: 'forwarded', reason: 'anonymous' })).to.equal(1);
    expect(delta({ outcome: 'challenged', reason: 'unauthorized' })).to.equal(1);
  });

  it('counts sign-ins, refreshes and logouts by provider and result, and times the provider calls; never a user or a path', async () => {
    const before = await text();
    const browser = new Browser();
    await signIn(browser, deployment);
    const user = (
      JSON.parse((await browser.request(`${deployment.url}/who`)).body) as { headers: Record<string, string> }
    ).headers['x-platform-client-principal-id']!;
    expect((await browser.request(`${deployment.url}/.auth/refresh`)).status).to.equal(200);
    expect((await browser.request(`${deployment.url}/.auth/logout`)).status).to.equal(302);
    const after = await text();
    const delta = (name: string, labels: Record<string, string>) =>
      sample(after, name, labels) - sample(before, name, labels);
    expect(delta('gatehouse_sign_ins_total', { provider: 'dev', result: 'success' })).to.equal(1);
    expect(delta('gatehouse_refreshes_total', { provider: 'dev', result: 'success' })).to.equal(1);
    expect(delta('gatehouse_logouts_total', { provider: 'dev', kind: 'local' })).to.equal(1);
    expect(
      delta('gatehouse_provider_request_duration_seconds_count', { provider: 'dev', operation: 'sign_in' }),
    ).to.equal(1);
    expect(
      delta('gatehouse_provider_request_duration_seconds_count', { provider: 'dev', operation: 'refresh' }),
    ).to.equal(1);
    expect(
      delta('gatehouse_token_store_operation_duration_seconds_count', { store: 'filesystem', operation: 'put' }),
    ).to.be.at.least(2); // the sign-in, the refresh
    expect(
      delta('gatehouse_token_store_operation_duration_seconds_count', { store: 'filesystem', operation: 'delete' }),
    ).to.equal(1);
    expect(sample(after, 'gatehouse_token_store_up', { store: 'filesystem' })).to.equal(1);
    expect(user).to.be.a('string').that.is.not.empty;
    expect(after).not.to.include(user);
    expect(after).not.to.include('secret-path-marker');
  });

  it('counts webhook deliveries by event and status; an event gatehouse has no handler for is "other"', async () => {
    const before = await text();
    expect((await deliver(deployment.url, 'push', '{"commits":[]}')).status).to.equal(200);
    expect((await deliver(deployment.url, 'made-up-event-marker', '{}')).status).to.equal(200);
    expect(
      (await deliver(deployment.url, 'push', '{}', { 'x-forge-signature-256': 'sha256=' + '0'.repeat(64) })).status,
    ).to.equal(401);
    const after = await text();
    const delta = (labels: Record<string, string>) =>
      sample(after, 'gatehouse_webhook_deliveries_total', labels) -
      sample(before, 'gatehouse_webhook_deliveries_total', labels);
    expect(delta({ event: 'push', status: '200' })).to.equal(1);
    expect(delta({ event: 'other', status: '200' })).to.equal(1);
    expect(delta({ event: 'push', status: '401' })).to.equal(1);
    expect(after).not.to.include('made-up-event-marker');
  });

  it('the listener: GET and HEAD /metrics in the text format; another path 404, another method 405', async () => {
    const get = (url: string, method = 'GET') => request(url, { method, path: '' });
    const got = await get(listener.url);
    expect(got.status).to.equal(200);
    expect(got.headers['content-type']).to.match(/^text\/plain; version=0\.0\.4/);
    expect(got.text).to.match(/^# HELP gatehouse_requests_total /m);
    expect(got.text).to.match(/^process_cpu_seconds_total /m);
    expect((await get(listener.url, 'HEAD')).text).to.equal('');
    expect((await get(listener.url.replace('/metrics', '/other'))).status).to.equal(404);
    const posted = await request(listener.url, { method: 'POST', path: '', body: 'x' });
    expect(posted.status).to.equal(405);
    expect(posted.headers.allow).to.equal('GET, HEAD');
  });

  it('counts requests the app did not answer: the app down is an error (502)', async () => {
    const before = sample(await text(), 'gatehouse_upstream_failures_total', { kind: 'error' });
    await deployment.closeUpstream(); // the last test: the app stays down
    for (let i = 0; i < 3; i++)
      expect((await new Browser().request(`${deployment.url}/public/x`)).status).to.equal(502);
    expect(sample(await text(), 'gatehouse_upstream_failures_total', { kind: 'error' }) - before).to.equal(3);
  });
});
