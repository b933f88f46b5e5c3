// The public catalog of event types (spec: Events). Subscriptions name them exactly, by area (`section.*`)
// or all (`*`). Every change the API makes writes one of these into the outbox, in its own transaction.
export const eventCatalog = {
  'api_key.created': 'An API key was created (on the admin page or with the CLI); the key itself is never in an event.',
  'api_key.revoked': 'An API key was revoked.',
  'oauth_client.created': 'An OAuth client was registered (on the admin page, with the CLI, or by itself through dynamic registration).',
  'oauth_client.secret_rotated': 'An OAuth client’s secret was replaced; the previous one no longer works.',
  'oauth_client.deleted': 'An OAuth client was deleted; every token it held is revoked.',
  'user.created': 'A user was added to the organisation.',
  'user.updated': 'A user was changed: name, e-mail address, roles or status (suspended or active again).',
  'user.deleted': 'A user was removed; their sign-in, sessions, API keys and OAuth grants stopped working.',
  'user.invited': 'A user was mailed a one-time link to choose a password.',
  'role.created': 'A custom role was created.',
  'role.updated': 'A custom role was renamed or its capabilities changed; its holders may do what it allows from the next request.',
  'role.deleted': 'A custom role was deleted.',
  'organisation.updated': 'The organisation’s name, time zone or default language changed.',
  'category.created': 'A course category was created.',
  'category.updated': 'A course category was changed.',
  'category.deleted': 'A course category was deleted.',
  'course.created': 'A course was created.',
  'course.updated': 'A course was changed.',
  'course.deleted': 'A course was deleted.',
  'enrolment_method.created': 'An enrolment method was added to a course.',
  'enrolment_method.updated': 'An enrolment method was changed (name, status, role, settings).',
  'enrolment_method.deleted': 'An enrolment method was deleted; the summary says how many enrolments ended with it.',
  'enrolment.created': 'A user was enrolled in a course; the body names the enrolment, the course and the user.',
  'enrolment.updated': 'An enrolment’s role, status or dates changed.',
  'enrolment.deleted': 'An enrolment ended: unenrolled, or its user, course or enrolment method was deleted.',
  'storage_target.created': 'An organisation storage target was added.',
  'storage.default_target_changed': 'New files now go to another storage target (or back to the deployment storage).',
  'file.created': 'A file was stored.',
  'webhook_subscription.created': 'A webhook subscription was created (after its endpoint answered the ping).',
  'webhook_subscription.updated': 'A webhook subscription was changed, enabled or disabled.',
  'webhook_subscription.deleted': 'A webhook subscription was deleted.',
  'webhook_subscription.secret_rotated': 'A webhook subscription’s signing secret was rotated.',
  'webhook_subscription.test_sent': 'A test delivery was queued for a webhook subscription.',
  'webhook_subscription.delivery_resent': 'A delivery was queued again from the delivery log.',
  'webhook_subscription.auto_disabled': 'A webhook subscription was disabled after repeated failed deliveries.',
  'section.created': 'A section was added to a course.',
  'section.updated': 'A section was renamed, shown or hidden.',
  'section.deleted': 'A section was deleted.',
  'activity.created': 'An activity (a wiki, a lesson) was added to a course.',
  'activity.updated': 'An activity was renamed or moved to another section.',
  'activity.deleted': 'An activity was deleted.',
  'wiki_page.created': 'A wiki page was created (its version 1).',
  'wiki_page.updated': 'A wiki page was edited: its title or body changed, making a new version.',
  'wiki_page.deleted': 'A wiki page was deleted.',
  'wiki_page.restored': 'An earlier version of a wiki page was restored as a new version.',
  'lesson_page.created': 'A page was added to a lesson.',
  'lesson_page.updated': 'A lesson page was changed (title, type, contents, answers or place in the lesson).',
  'lesson_page.deleted': 'A lesson page was deleted.',
  'email_template.draft_saved': "An organisation email template's draft was written (not yet in use).",
  'email_template.published': "An organisation email template's draft was published; the version published before was archived.",
  'email_template.draft_restored': 'An earlier version of an organisation email template was copied into its draft (not yet in use).',
  'platform_email_template.draft_saved': "A platform email template's draft was written (not yet in use).",
  'platform_email_template.published': "A platform email template's draft was published; the version published before was archived.",
  'platform_email_template.draft_restored': 'An earlier version of a platform email template was copied into its draft (not yet in use).',
  'email_message.created': 'An email message was created, as a draft or scheduled.',
  'email_message.updated': 'An email message was changed, scheduled, unscheduled or cancelled.',
  'email_message.deleted': 'An email message was deleted (a scheduled one is cancelled with it).',
  'email_message.sent': 'An email message finished sending; the summary counts the recipients reached and failed.',
} as const;

export type EventType = keyof typeof eventCatalog;

export const isEventType = (name: string): name is EventType => Object.hasOwn(eventCatalog, name);

/** `section.*` → ['section.created', …]; `*` → every type. */
export function eventTypesMatching(pattern: string): EventType[] {
  const all = Object.keys(eventCatalog) as EventType[];
  if (pattern === '*') return all;
  if (pattern.endsWith('.*')) return all.filter((t) => t.startsWith(pattern.slice(0, -1)));
  return isEventType(pattern) ? [pattern] : [];
}
