// The end of a server-directed sign-in: /.auth/login/<provider>/callback.
import { unseal } from '../crypto/sealed.js';
import {
  asSentence,
  type Decision,
  MAX_AUTH_BODY_BYTES,
  mediaType,
  originUrl,
  readBoundedBody,
  requestCookie,
  type RouteRequest,
} from '../http/request-view.js';
import { errorDecision, redirectDecision } from '../http/responses.js';
import { lacksUserId, unsendableHeaderValue } from '../identity.js';
import { secondsSince } from '../auth-metrics.js';
import { ProviderRefusedError, ProviderUnavailableError } from '../providers/errors.js';
import { loggableErrorCode, shownErrorCode } from '../providers/oauth-error-code.js';
import type { Provider, SignIn } from '../providers/provider.js';
import { TokenForbiddenError } from '../tokens/errors.js';
import type { LayerContext } from './context.js';
import { providerUnavailable, sessionRecord } from './login-flow.js';
import { callbackPath, loginPath, signInAgain } from './login-paths.js';
import {
  transactionCookie,
  transactionCookieName,
  transactionLabel,
  type LoginTransaction,
} from './login-transaction.js';

interface Refusal {
  readonly status: number;
  readonly reason: string;
  readonly message: string;
  readonly headers?: Readonly<Record<string, string>>;
}

async function callbackParameters(request: RouteRequest): Promise<URLSearchParams | Refusal> {
  if (request.view.method === 'GET') return request.searchParams;
  if (mediaType(request.view) !== 'application/x-www-form-urlencoded') {
    return {
      status: 415,
      reason: 'callback POST is not a form',
      message: 'The callback must be a GET or a form POST.',
    };
  }
  const read = await readBoundedBody(request.view, MAX_AUTH_BODY_BYTES);
  if ('body' in read) return new URLSearchParams(read.body.toString('utf8'));
  return {
    status: read.status,
    reason: `callback: ${read.reason}`,
    message: asSentence(read.reason),
    ...(read.headers ? { headers: read.headers } : {}),
  };
}

export async function finishLogin(context: LayerContext, request: RouteRequest, provider: Provider): Promise<Decision> {
  const alias = provider.alias;
  let clearTransaction: readonly string[] = []; // once the callback has named its login
  let returnTo: string | undefined; // once its login has opened: where it was going
  const again = () => [signInAgain(context, alias, 'Sign in again', returnTo)];
  const refuse = (
    status: number,
    reason: string,
    message: string,
    headers?: Readonly<Record<string, string>>,
    links = again(),
  ): Decision => {
    context.logger.warn({ provider: alias, reason, path: request.view.path }, 'sign-in callback refused');
    context.metrics.signIn(alias, 'refused');
    return errorDecision(
      status,
      'Sign-in failed',
      message,
      request.json,
      { cookies: clearTransaction, ...(headers ? { headers } : {}) },
      links,
    );
  };
  // The callback's `error` is whatever the link said: logged bounded, named on the page only when registered.
  const refuseProviderError = (code: string, note: string): Decision => {
    const shown = shownErrorCode(code);
    return refuse(
      401,
      `provider error ${loggableErrorCode(code)}${note}`,
      `The identity provider did not sign you in${shown ? ` (${shown})` : ''}.`,
    );
  };

  const params = await callbackParameters(request);
  if (!(params instanceof URLSearchParams)) return refuse(params.status, params.reason, params.message, params.headers);

  const correlation = provider.callbackCorrelation
    ? provider.callbackCorrelation(params)
    : params.get('state') || undefined;
  if (correlation === undefined) {
    const providerError = params.get('error');
    if (providerError !== null) return refuseProviderError(providerError, ' (no state)');
    return refuse(400, 'callback without state', 'The sign-in answer is incomplete. Please start again.');
  }
  const name = transactionCookieName(context, correlation);
  clearTransaction = [transactionCookie(context, provider, name, '', 0, request.secure)];
  const sealed = requestCookie(request.view, name);
  if (sealed === undefined) {
    return refuse(
      400,
      'no login transaction cookie for this state',
      'This sign-in was not started here, or your browser did not keep its cookie. Please start again.',
    );
  }
  const opened = unseal<LoginTransaction>(context.transactionKey, transactionLabel(alias, name), sealed, context.now());
  if (!opened.ok) {
    if (opened.reason === 'expired')
      return redirectDecision(loginPath(context.config.apiPrefix, alias), { cookies: clearTransaction });
    return refuse(400, `login transaction ${opened.reason}`, 'The sign-in state is invalid. Please start again.');
  }
  const transaction = opened.value;
  returnTo = transaction.r;
  if (context.now() - transaction.t > context.config.nonce.lifetimeMs) {
    // Took too long: start over cleanly, keeping where the user wanted to go. Not an account prompt it asked for:
    // the person has just chosen the account at the provider, whose session now answers the restart with it.
    context.logger.info({ provider: alias, path: request.view.path }, 'login transaction expired; restarting sign-in');
    return redirectDecision(loginPath(context.config.apiPrefix, alias, transaction.r), { cookies: clearTransaction });
  }
  if (transaction.p !== alias)
    return refuse(400, 'transaction for another provider', 'The sign-in state does not match this provider.');
  if (transaction.h !== request.origin.host)
    return refuse(400, 'callback host mismatch', 'The sign-in finished on another host than it started on.');

  const providerError = params.get('error');
  if (providerError !== null) return refuseProviderError(providerError, '');

  const redirectUri = `${originUrl(request.origin)}${callbackPath(context, alias)}`;
  let signIn: SignIn;
  const started = performance.now();
  try {
    signIn = await provider.complete({
      params,
      redirectUri,
      state: transaction.s,
      nonce: transaction.n,
      expectedNonce: context.config.nonce.validate ? transaction.n : undefined,
      codeVerifier: transaction.v,
      saved: transaction.x ?? {},
    });
  } catch (error) {
    context.metrics.providerCall(alias, 'sign_in', secondsSince(started));
    if (error instanceof ProviderUnavailableError) {
      context.metrics.signIn(alias, 'unavailable');
      return providerUnavailable(context, request, alias, error, returnTo);
    }
    if (error instanceof TokenForbiddenError) {
      // Signing in again plainly would bring the same account back from the provider's own session.
      return refuse(403, error.message, 'Your account is not allowed to sign in to this application.', undefined, [
        signInAgain(context, alias, 'Sign in with another account', returnTo, 'select_account'),
      ]);
    }
    if (error instanceof ProviderRefusedError) {
      if (error.oauthError === 'invalid_state')
        return refuse(400, error.message, 'The sign-in state does not match. Please start again.');
      if (error.oauthError === 'invalid_request')
        return refuse(400, error.message, 'The identity provider returned an incomplete answer. Please start again.');
      return refuse(401, error.message, 'The identity provider response could not be verified. Please sign in again.');
    }
    context.logger.error(
      { provider: alias, reason: (error as Error).message, path: request.view.path },
      'sign-in failed unexpectedly',
    );
    context.metrics.signIn(alias, 'error');
    return errorDecision(
      500,
      'Sign-in failed',
      'Something went wrong while signing you in. Please try again.',
      request.json,
      { cookies: clearTransaction },
      again(),
    );
  }
  context.metrics.providerCall(alias, 'sign_in', secondsSince(started));
  if (lacksUserId(signIn))
    return refuse(
      502,
      "the provider's answer names no user",
      'The identity provider sent an answer that names no user.',
    );
  const unsendable = unsendableHeaderValue(signIn);
  if (unsendable !== undefined) {
    return refuse(
      502,
      `the provider's ${unsendable} holds a control character`,
      'The identity provider sent an answer that cannot be passed on to the application.',
    );
  }
  const record = sessionRecord(context, provider, signIn, request.origin.host);
  // Rotate: a session id the browser held before signing in is never promoted.
  const previous = context.sessionCookie.read(request.view);
  if (previous.state === 'valid') await context.sessions.destroy(previous.id);
  const id = await context.sessions.create(record);
  context.logger.info({ provider: alias, path: request.view.path }, 'signed in');
  context.metrics.signIn(alias, 'success');
  return redirectDecision(transaction.r, {
    cookies: [context.sessionCookie.set(id, record.expiresAt, request.secure), ...clearTransaction],
  });
}
