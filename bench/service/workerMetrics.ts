/**
 * A worker's own account of itself, read from its Prometheus endpoint: the
 * heap (prom-client's default `nodejs_*` metrics), to say what its RSS is made
 * of, and the time its jobs spent compacting, waiting on the summarizer and
 * delivering callbacks, to say where a job's turn around the worker's slots goes.
 */
export interface WorkerMetrics {
  readonly heapUsedBytes: number;
  readonly heapTotalBytes: number;
  readonly externalBytes: number;
  /** `compactd_job_duration_seconds`: the compactor's call, summarizer included. */
  readonly compact: Histogram;
  /** `compactd_summarizer_duration_seconds`: one summarization call. */
  readonly summarizer: Histogram;
  /** `compactd_callback_duration_seconds`: one callback attempt (a first delivery holds its job's slot). */
  readonly callback: Histogram;
}

/** Sum and count of a histogram over all its label sets. */
export interface Histogram {
  readonly sum: number;
  readonly count: number;
}

function gauge(text: string, name: string): number {
  const value = new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1];
  if (value === undefined) throw new Error(`no ${name} in the worker's metrics`);
  return Number(value);
}

function histogram(text: string, name: string): Histogram {
  const total = (series: string) =>
    [...text.matchAll(new RegExp(`^${name}_${series}(?:\\{[^}]*\\})? (\\S+)$`, "gm"))].reduce((sum, m) => sum + Number(m[1]), 0);
  return { sum: total("sum"), count: total("count") };
}

export async function workerMetrics(metricsPort: number): Promise<WorkerMetrics> {
  const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  const text = await response.text();
  return {
    heapUsedBytes: gauge(text, "nodejs_heap_size_used_bytes"),
    heapTotalBytes: gauge(text, "nodejs_heap_size_total_bytes"),
    externalBytes: gauge(text, "nodejs_external_memory_bytes"),
    compact: histogram(text, "compactd_job_duration_seconds"),
    summarizer: histogram(text, "compactd_summarizer_duration_seconds"),
    callback: histogram(text, "compactd_callback_duration_seconds"),
  };
}

/** Mean seconds of what a histogram recorded between two readings. */
export function meanBetween(before: Histogram, after: Histogram): number {
  return (after.sum - before.sum) / Math.max(1, after.count - before.count);
}
