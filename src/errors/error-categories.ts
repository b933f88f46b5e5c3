// spec: Errors — the category table: each category's HTTP status and whether a client should retry.
import type { ErrorCategory } from './error-catalog.ts';

export const errorCategories: { readonly [C in ErrorCategory]: { status: string; retry: string } } = {
  validation: { status: '422, field details in `errors`', retry: 'No' },
  authentication: { status: '401', retry: 'No' },
  authorization: { status: '403', retry: 'No' },
  not_found: { status: '404', retry: 'No' },
  conflict: { status: '409', retry: 'Sometimes' },
  precondition: { status: '412', retry: 'No' },
  quota: { status: '402 for the plan, 413 for size', retry: 'No' },
  rate_limit: { status: '429, with `Retry-After`', retry: 'Yes' },
  upstream: { status: '502 or 504', retry: 'Yes' },
  internal: { status: '500', retry: 'Yes' },
};
