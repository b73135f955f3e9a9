// How many requests a gatehouse has judged, from its Prometheus metrics (`--metrics-port`): the
// benchmarks count with it the questions that reach gatehouse behind a web server that keeps its
// answers.

/** The sum of `gatehouse_requests_total` over every outcome and reason, in a metrics page's text. */
export function judgedRequestsIn(metrics: string): number {
  let sum = 0;
  for (const line of metrics.split('\n')) {
    if (!line.startsWith('gatehouse_requests_total{') && !line.startsWith('gatehouse_requests_total ')) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (!Number.isFinite(value)) throw new Error(`gatehouse's metrics: an unreadable line: ${line}`);
    sum += value;
  }
  return sum;
}

/** The same, asked of the metrics listener on `port` (loopback). */
export async function judgedRequests(port: number): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`);
  if (!response.ok) throw new Error(`gatehouse's metrics answered ${response.status}`);
  return judgedRequestsIn(await response.text());
}
