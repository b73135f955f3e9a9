// An app that records every request it parses off its connections, pipelined ones included,
// with its whole body: what gatehouse really sent it, request by request. A body sent without
// framing would show here as a request of its own.
import http from 'node:http';

export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

export interface RecordingApp {
  readonly requests: RecordedRequest[];
  readonly handler: http.RequestListener;
}

export function recordingApp(): RecordingApp {
  const requests: RecordedRequest[] = [];
  const handler: http.RequestListener = (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('latin1'),
      });
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`app saw ${req.method} ${req.url}`);
    });
  };
  return { requests, handler };
}
