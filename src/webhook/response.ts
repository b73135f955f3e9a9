export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** Everything an adapter needs to send one answer. */
export interface WebhookResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
  /** The request body was not (fully) read: close the connection after answering. */
  readonly closeConnection: boolean;
  /** Run once the response has been handed to the network (subscribers). */
  readonly afterResponse?: () => void;
}

export function jsonResponse(
  status: number,
  value: unknown,
  extra: { headers?: Record<string, string>; closeConnection?: boolean; afterResponse?: () => void } = {},
): WebhookResponse {
  const body = Buffer.from(JSON.stringify(value), 'utf8');
  return {
    status,
    headers: {
      'Content-Type': JSON_CONTENT_TYPE,
      'Content-Length': String(body.length),
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
      ...(extra.closeConnection ? { Connection: 'close' } : {}),
      ...extra.headers,
    },
    body,
    closeConnection: extra.closeConnection ?? false,
    ...(extra.afterResponse ? { afterResponse: extra.afterResponse } : {}),
  };
}

export function errorResponse(
  status: number,
  message: string,
  extra: Parameters<typeof jsonResponse>[2] = {},
): WebhookResponse {
  return jsonResponse(status, { error: message }, extra);
}
