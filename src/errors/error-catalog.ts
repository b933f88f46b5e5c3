// Every error code the API can answer with: its category, HTTP status and title. Services throw
// `new ApiError(code, detail)`; the problem-document handler, the OpenAPI document and the error docs pages
// (`/docs/errors/<code>`) all read this one table. Codes are stable: clients decide behaviour on them.
export type ErrorCategory =
  | 'validation'
  | 'authentication'
  | 'authorization'
  | 'not_found'
  | 'conflict'
  | 'precondition'
  | 'quota'
  | 'rate_limit'
  | 'upstream'
  | 'internal';

interface CatalogEntry {
  status: number;
  category: ErrorCategory;
  title: string;
}

const entry = (status: number, category: ErrorCategory, title: string): CatalogEntry => ({ status, category, title });

export const errorCatalog = {
  // The HTTP layer
  'request.malformed_json': entry(422, 'validation', 'The request body is not valid JSON'),
  'request.body_required': entry(422, 'validation', 'The request needs a JSON body'),
  // docs/conventions.md#errors: the spec's status table is exhaustive, so media type and depth are 422s and size is a 413.
  'request.unsupported_media_type': entry(422, 'validation', 'Request bodies must be application/json'),
  'request.too_deep': entry(422, 'validation', 'The JSON body is nested too deeply'),
  'request.malformed': entry(422, 'validation', 'The request is not well-formed HTTP'),
  'request.body_too_large': entry(413, 'quota', 'The request body is too large'),
  'request.too_large': entry(413, 'quota', 'The request line or a path segment is too long'),
  'request.route_not_found': entry(404, 'not_found', 'No such route'),
  'validation.invalid_body': entry(422, 'validation', 'The request body is invalid'),
  'validation.invalid_parameter': entry(422, 'validation', 'A query parameter or header is invalid'),
  'versioning.invalid_revision': entry(422, 'validation', 'The Service-Version is not a revision of this API'),

  // Tenancy, authentication, authorization, plan
  'tenancy.unknown_organisation': entry(404, 'not_found', 'No organisation at this address'),
  'auth.missing_credential': entry(401, 'authentication', 'A bearer credential is required'),
  'auth.invalid_credential': entry(401, 'authentication', 'The credential is not valid here'),
  'auth.expired_credential': entry(401, 'authentication', 'The credential has expired'),
  'auth.revoked_credential': entry(401, 'authentication', 'The credential has been revoked'),
  'auth.insufficient_scope': entry(403, 'authorization', 'The credential lacks a required scope'),
  'auth.missing_capability': entry(403, 'authorization', 'You lack a required capability'),
  'commerce.plan_entitlement': entry(412, 'precondition', "The organisation's plan does not include API access for this"),

  // Idempotency (spec: Conventions — Idempotency-Key)
  'idempotency.key_required': entry(422, 'validation', 'This operation requires an Idempotency-Key header'),
  'idempotency.key_invalid': entry(422, 'validation', 'The Idempotency-Key header is invalid'),
  'idempotency.key_reused': entry(409, 'conflict', 'The Idempotency-Key was used for a different request'),
  'idempotency.in_progress': entry(409, 'conflict', 'A request with this Idempotency-Key is still running'),

  // Limits
  'rate_limit.exceeded': entry(429, 'rate_limit', 'Too many requests'),
  'rate_limit.concurrency': entry(429, 'rate_limit', 'Too many requests in flight'),

  // Resources
  'category.not_found': entry(404, 'not_found', 'No such category'),
  'category.deleted': entry(409, 'conflict', 'The category has been deleted'),
  'course.not_found': entry(404, 'not_found', 'No such course'),
  'course.deleted': entry(409, 'conflict', 'The course has been deleted'),
  'section.not_found': entry(404, 'not_found', 'No such section'),
  'audit_event.not_found': entry(404, 'not_found', 'No such audit event'),
  'section.deleted': entry(409, 'conflict', 'The section has been deleted'),
  'activity.not_found': entry(404, 'not_found', 'No such activity'),
  'activity.deleted': entry(409, 'conflict', 'The activity has been deleted'),
  'wiki_page.not_found': entry(404, 'not_found', 'No such wiki page'),
  'wiki_page.deleted': entry(409, 'conflict', 'The wiki page has been deleted'),
  'wiki_page.version_not_found': entry(404, 'not_found', 'The wiki page has no such version'),
  'wiki_page.title_taken': entry(409, 'conflict', 'Another page of this subwiki has that title'),
  'wiki_page.edit_conflict': entry(409, 'conflict', 'The wiki page changed while this change was being made'),
  'lesson_page.not_found': entry(404, 'not_found', 'No such lesson page'),
  'lesson_page.deleted': entry(409, 'conflict', 'The lesson page has been deleted'),
  'enrolment_method.not_found': entry(404, 'not_found', 'No such enrolment method'),
  'enrolment_method.deleted': entry(409, 'conflict', 'The enrolment method has been deleted'),
  'enrolment_method.has_enrolments': entry(409, 'conflict', 'The enrolment method still has active enrolments'),
  'enrolment_method.disabled': entry(409, 'conflict', 'The enrolment method is disabled'),
  'enrolment.not_found': entry(404, 'not_found', 'No such enrolment'),
  'enrolment.deleted': entry(409, 'conflict', 'The enrolment has been deleted'),
  'enrolment.exists': entry(409, 'conflict', 'The user is already enrolled through this method'),
  'storage_target.not_found': entry(404, 'not_found', 'No such storage target'),
  'storage.already_default': entry(409, 'conflict', 'That storage is already the default for new files'),
  'storage.directory_taken': entry(409, 'conflict', 'Another storage target uses that directory'),
  'storage.too_many_targets': entry(409, 'conflict', 'The organisation has as many storage targets as it may'),
  'file.not_found': entry(404, 'not_found', 'No such file'),
  'email_template.message_not_found': entry(404, 'not_found', 'No such message in the catalog'),
  'email_template.scope_not_found': entry(404, 'not_found', 'No such category, course or activity in this organisation'),
  'email_template.version_not_found': entry(404, 'not_found', 'The template has no such version at this scope and language'),
  'email_template.version_is_draft': entry(409, 'conflict', 'That version is the draft itself'),
  'email_template.no_draft': entry(409, 'conflict', 'The template has no draft to publish'),
  'email_template.scope_deleted': entry(409, 'conflict', 'The category, course or activity of this template has been deleted'),
  'email_template.concurrent_change': entry(409, 'conflict', 'The template changed while this change was being made'),
  'email_message.not_found': entry(404, 'not_found', 'No such email message'),
  'email_message.deleted': entry(409, 'conflict', 'The email message has been deleted'),
  'email_message.sending': entry(409, 'conflict', 'The email message is being sent'),
  'email_message.sent': entry(409, 'conflict', 'The email message has been sent; it is final'),
  'email_message.cancelled': entry(409, 'conflict', 'The email message has been cancelled; it is final'),
  'email_message.concurrent_change': entry(409, 'conflict', 'The email message changed while this change was being made'),
  'webhook_subscription.not_found': entry(404, 'not_found', 'No such webhook subscription'),
  'webhook_subscription.url_taken': entry(409, 'conflict', 'A subscription for that URL exists already'),
  'webhook_delivery.not_found': entry(404, 'not_found', 'No such delivery'),
  'webhook_delivery.pending': entry(409, 'conflict', 'The delivery is still being tried'),
  'extension.disabled': entry(409, 'conflict', 'The extension that provides this is switched off here'),
  'extension.not_found': entry(404, 'not_found', 'No such extension'),
  'oauth_client.not_found': entry(404, 'not_found', 'No such OAuth client'),
  'oauth_client.public': entry(409, 'conflict', 'A public client has no secret'),
  'user.not_found': entry(404, 'not_found', 'No such user'),
  'user.deleted': entry(409, 'conflict', 'The user has been removed'),
  'user.email_taken': entry(409, 'conflict', 'Another user of this organisation has that e-mail address'),
  'user.self': entry(409, 'conflict', 'You cannot remove or suspend yourself'),
  'user.last_admin': entry(409, 'conflict', "The organisation's last active administrator cannot be removed, suspended or lose the role"),
  'role.not_found': entry(404, 'not_found', 'No such role'),
  'role.built_in': entry(409, 'conflict', 'Built-in roles cannot change'),
  'role.in_use': entry(409, 'conflict', 'Someone holds the role'),
  'role.key_taken': entry(409, 'conflict', 'A role with that key exists already'),
  'resource.external_id_taken': entry(409, 'conflict', 'Another resource of this type has that external_id'),

  // Bulk operations (spec: Bulk semantics; docs/api-guide.md#bulk-operations-8-and-9)
  'bulk.too_many_operations': entry(413, 'quota', 'The bulk request has more operations than allowed'),
  'bulk.rolled_back': entry(409, 'conflict', 'Another operation of the atomic bulk request failed, so this one was rolled back'),

  // The MCP server (docs/mcp.md)
  'mcp.disabled': entry(404, 'not_found', "This organisation's administrator has switched the MCP server off"),
  'mcp.invalid_arguments': entry(422, 'validation', 'The tool arguments are invalid'),
  'mcp.confirmation_invalid': entry(422, 'validation', 'The confirmation is wrong, used, expired or for another call'),

  // docs/conventions.md#errors: the database unreachable while running (and while a process waits for it at start).
  'database.unavailable': entry(502, 'upstream', 'The database is not reachable at the moment'),
  // Answered by the proxy in front of the server processes when none of them answers (deploy/nginx.conf), to any
  // request; never by a process itself, so no operation lists it.
  'service.unavailable': entry(502, 'upstream', 'No server process is answering at the moment'),
  // Redis (REDIS_URL) unreachable where it cannot be done without: the sign-in lockout's counts.
  'shared_state.unavailable': entry(502, 'upstream', 'The shared store of the server processes is not reachable at the moment'),

  // The command-line tool `atrium` (src/cli/), whose --json failures carry a code like the API's problem
  // documents; the API never answers with these. The status is the one an API would use for the same refusal.
  'cli.usage': entry(422, 'validation', 'The command line does not fit the command'),
  'cli.invalid_argument': entry(422, 'validation', 'An argument has a value the service refuses'),
  'cli.invalid_configuration': entry(422, 'validation', 'The environment holds an invalid configuration'),
  'cli.address_taken': entry(409, 'conflict', 'Another organisation has that address'),
  'cli.api_key_not_found': entry(404, 'not_found', 'No such unrevoked API key in the organisation'),

  // SMTP_URL's server refused or could not take a mail the request exists to send (an invitation).
  'mail.unavailable': entry(502, 'upstream', 'The mail server did not accept the mail'),
  'internal.error': entry(500, 'internal', 'Something went wrong on our side'),
  'health.database_unreachable': entry(503, 'internal', 'The database is not reachable'),
} as const satisfies Record<string, CatalogEntry>;

export type ErrorCode = keyof typeof errorCatalog;

export function catalogEntry(code: ErrorCode): CatalogEntry {
  return errorCatalog[code];
}
