// The one error type services throw. It carries a catalog code; status, category and title come from the
// catalog so they cannot drift. The problem-document handler turns it into an RFC 9457 response.
import { catalogEntry, type ErrorCode } from './error-catalog.ts';

export interface FieldError {
  /** RFC 6901 JSON Pointer into the request body. */
  path: string;
  code: string;
  detail: string;
}

export interface ApiErrorOptions {
  errors?: FieldError[];
  /** Seconds; also sent as the Retry-After header. */
  retryAfter?: number;
  headers?: Record<string, string>;
}

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly category: string;
  readonly title: string;
  readonly detail: string;
  readonly errors: FieldError[] | undefined;
  readonly retryAfter: number | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, detail?: string, options: ApiErrorOptions = {}) {
    const entry = catalogEntry(code);
    super(detail ?? entry.title);
    this.name = 'ApiError';
    this.code = code;
    this.status = entry.status;
    this.category = entry.category;
    this.title = entry.title;
    this.detail = detail ?? `${entry.title}.`;
    this.errors = options.errors;
    this.retryAfter = options.retryAfter;
    this.headers = options.headers;
  }
}

/** A 422 about one body field. */
export function fieldError(path: string, code: string, detail: string): ApiError {
  return new ApiError('validation.invalid_body', detail, { errors: [{ path, code, detail }] });
}
