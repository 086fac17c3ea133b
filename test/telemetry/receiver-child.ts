// A second, independent OTLP receiver in a process of its own (what a Jaeger or Collector is to
// a run): prints its URL, then one line per span it gets.
import { startOtlpReceiver } from '../../src/observe/otlp-receiver.js';

const receiver = await startOtlpReceiver({
  maxSpans: 0,
  onSpans: (spans) => {
    for (const s of spans) process.stdout.write(`span ${s.service} ${s.name}\n`);
  },
});
process.stdout.write(`url ${receiver.url}\n`);
process.on('SIGTERM', () => void receiver.stop().then(() => process.exit(0)));
