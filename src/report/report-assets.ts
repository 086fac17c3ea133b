// The charting library report.html inlines: uPlot's browser build, its stylesheet and its
// licence, read from node_modules when a report is rendered (never fetched by the page), and
// checked so an inlined script cannot end the <script> element it sits in.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { LimboError } from '../util/errors.js';

export interface ReportAssets {
  uplotJs: string;
  uplotCss: string;
  uplotLicense: string;
  uplotVersion: string;
}

export class ReportAssetError extends LimboError {
  constructor(message: string, options?: ErrorOptions) {
    super('REPORT_ASSET', message, options);
  }
}

let cached: ReportAssets | undefined;

export function loadReportAssets(): ReportAssets {
  if (cached !== undefined) return cached;
  const require = createRequire(import.meta.url);
  let pkgPath: string;
  try {
    pkgPath = require.resolve('uplot/package.json');
  } catch (err) {
    throw new ReportAssetError(`uplot is not installed: ${(err as Error).message}`);
  }
  const root = dirname(pkgPath);
  const read = (rel: string): string => readFileSync(join(root, rel), 'utf8');
  const uplotJs = read('dist/uPlot.iife.min.js');
  if (/<\/script/i.test(uplotJs) || uplotJs.includes('<!--'))
    throw new ReportAssetError('uPlot build contains a sequence that would break an inline <script>');
  const uplotCss = read('dist/uPlot.min.css');
  if (/<\/style/i.test(uplotCss)) throw new ReportAssetError('uPlot stylesheet contains </style>');
  const { version } = JSON.parse(read('package.json')) as { version: string };
  cached = { uplotJs, uplotCss, uplotLicense: read('LICENSE').replace(/--/g, '- -'), uplotVersion: version };
  return cached;
}
