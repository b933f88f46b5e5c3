// The messages the platform sends, compiled into the application like the extensions (spec: What the service
// does 7): a template only rewords a message of this catalog, never invents one. Each message offers a fixed
// set of variables; a template version's `variable_refs` may name only those (anything else is a 422).
import { ApiError } from '../../errors/api-error.ts';

export const messageCategories = ['account', 'enrolment', 'course', 'assignment', 'quiz', 'forum', 'wiki', 'calendar', 'messaging', 'badges'] as const;
export type MessageCategory = (typeof messageCategories)[number];

export interface MessageVariable {
  name: string;
  description: string;
}

export interface MessageDefinition {
  message_key: string;
  title: string;
  description: string;
  category: MessageCategory;
  /** Sent whatever the recipient's notification preferences (account security, access to the platform). */
  critical: boolean;
  variables: readonly MessageVariable[];
}

const v = (name: string, description: string): MessageVariable => ({ name, description });

// Variables many messages share.
const firstname = v('user.firstname', "The recipient's first name.");
const fullname = v('user.fullname', "The recipient's full name.");
const siteName = v('site.name', 'The name of the organisation.');
const courseName = v('course.fullname', 'The full name of the course.');
const courseUrl = v('course.url', 'Link to the course page.');

const message = (
  message_key: string,
  category: MessageCategory,
  title: string,
  description: string,
  variables: MessageVariable[],
  critical = false,
): MessageDefinition => ({ message_key, title, description, category, critical, variables });

const definitions: MessageDefinition[] = [
  message('account_created', 'account', 'Account created', 'Sent to a person when an account is created for them.', [firstname, fullname, v('user.username', 'The sign-in name.'), v('login.url', 'Link to the sign-in page.'), siteName], true),
  message('email_confirmation', 'account', 'Confirm your e-mail address', 'Asks a person to confirm a new or changed e-mail address.', [firstname, v('confirm.url', 'Single-use confirmation link.'), v('confirm.expires_in_hours', 'Hours until the link expires.'), siteName], true),
  message('password_reset', 'account', 'Password reset', 'Sent when someone asks to reset the password of an account.', [firstname, v('reset.url', 'Single-use link to choose a new password.'), v('reset.expires_in_minutes', 'Minutes until the link expires.'), v('request.ip_address', 'Where the request came from.'), siteName], true),
  message('new_sign_in_alert', 'account', 'New sign-in to your account', 'Warns a person of a sign-in from a device not seen before.', [firstname, v('sign_in.time', 'When the sign-in happened.'), v('sign_in.device', 'Browser and operating system.'), v('sign_in.ip_address', 'Where the sign-in came from.'), siteName], true),
  message('enrolment_welcome', 'enrolment', 'Enrolment welcome', 'Welcomes a person enrolled in a course.', [firstname, fullname, courseName, courseUrl, v('enrolment.start_date', 'When access to the course begins.'), siteName]),
  message('enrolment_expiry_notice', 'enrolment', 'Enrolment about to expire', 'Reminds a person that their access to a course ends soon.', [firstname, courseName, courseUrl, v('enrolment.end_date', 'When access ends.')]),
  message('course_completion', 'course', 'Course completed', 'Congratulates a person who completed a course.', [firstname, fullname, courseName, v('completion.date', 'When the course was completed.'), v('certificate.url', 'Link to the certificate, when there is one.')]),
  message('assignment_due_reminder', 'assignment', 'Assignment due soon', 'Reminds a student of an assignment due shortly that they have not submitted.', [firstname, courseName, v('assignment.name', 'The assignment.'), v('assignment.due_date', 'When it is due.'), v('assignment.url', 'Link to the assignment.')]),
  message('assignment_submission_received', 'assignment', 'Submission received', 'Confirms to a student that their submission arrived.', [firstname, courseName, v('assignment.name', 'The assignment.'), v('submission.time', 'When it was submitted.'), v('assignment.url', 'Link to the assignment.')]),
  message('assignment_graded', 'assignment', 'Assignment graded', 'Tells a student that their submission has a grade and feedback.', [firstname, courseName, v('assignment.name', 'The assignment.'), v('grade.value', 'The grade given.'), v('feedback.url', 'Link to the feedback.')]),
  message('quiz_attempt_graded', 'quiz', 'Quiz attempt graded', 'Tells a student that a quiz attempt has been graded.', [firstname, courseName, v('quiz.name', 'The quiz.'), v('attempt.grade', 'The grade of the attempt.'), v('attempt.review_url', 'Link to review the attempt.')]),
  message('forum_post_notification', 'forum', 'New forum post', 'Sent to subscribers of a forum for each new post.', [firstname, courseName, v('forum.name', 'The forum.'), v('post.author', 'Who wrote the post.'), v('post.subject', 'The subject of the post.'), v('post.url', 'Link to the post.'), v('forum.unsubscribe_url', 'Link to stop these messages.')]),
  message('forum_digest', 'forum', 'Daily forum digest', 'One message a day with the new posts of every forum a person follows.', [firstname, v('digest.date', 'The day the digest covers.'), v('digest.post_count', 'How many posts it lists.'), v('digest.posts', 'The posts, rendered as a list.'), v('forum.preferences_url', 'Link to the digest preferences.')]),
  message('wiki_page_changed', 'wiki', 'Wiki page changed', 'Tells the people following a wiki page that someone edited it.', [firstname, courseName, v('wiki.name', 'The wiki.'), v('page.title', 'The page.'), v('page.editor', 'Who edited it.'), v('page.url', 'Link to the page.')]),
  message('calendar_event_reminder', 'calendar', 'Upcoming event', 'Reminds a person of a calendar event shortly before it starts.', [firstname, v('event.name', 'The event.'), v('event.start_time', 'When it starts.'), v('event.url', 'Link to the event.')]),
  message('badge_awarded', 'badges', 'Badge awarded', 'Tells a person that they earned a badge.', [firstname, v('badge.name', 'The badge.'), v('badge.issuer', 'Who issued it.'), v('badge.url', 'Link to the badge.')]),
  message('private_message_offline', 'messaging', 'New private message', 'Forwards a private message to a person who was not signed in.', [firstname, v('sender.fullname', 'Who sent the message.'), v('message.preview', 'The beginning of the message.'), v('conversation.url', 'Link to the conversation.')]),
];

export const messageCatalog: ReadonlyMap<string, MessageDefinition> = new Map(definitions.map((d) => [d.message_key, d]));

/** The message a path's `message_key` names, or the 404 (spec: Errors 4). */
export function requireMessage(messageKey: string): MessageDefinition {
  const message = messageCatalog.get(messageKey);
  if (!message) throw new ApiError('email_template.message_not_found', `No message ${JSON.stringify(messageKey)} in the catalog; GET /email_templates lists them.`);
  return message;
}
