// Every API operation, in one list. Adding an area means adding its list here; routes, the OpenAPI
// document and the registry-driven test suites pick it up from this list alone.
import type { Operation } from './operations/operation.ts';
import { courseOperations } from './domain/courses/courses.operations.ts';
import { meOperations } from './domain/people/me.operations.ts';
import { sectionOperations } from './domain/sections/sections.operations.ts';
import { userOperations } from './domain/users/users.operations.ts';
import { roleOperations } from './domain/roles/roles.operations.ts';
import { organisationOperations } from './domain/organisation/organisation.operations.ts';
import { extensionOperations } from './domain/extensions/extensions.operations.ts';
import { enrolmentMethodOperations } from './domain/enrolment-methods/enrolment-methods.operations.ts';
import { storageOperations } from './domain/storage/storage.operations.ts';
import { webhookOperations } from './domain/webhooks/webhooks.operations.ts';
import { emailTemplateOperations } from './domain/email-templates/email-templates.operations.ts';
import { platformEmailTemplateOperations } from './domain/platform-email-templates/platform-email-templates.operations.ts';
import { activityOperations } from './domain/activities/activities.operations.ts';
import { wikiPageOperations } from './domain/wiki-pages/wiki-pages.operations.ts';
import { lessonPageOperations } from './domain/lesson-pages/lesson-pages.operations.ts';
import { emailMessageOperations } from './domain/email-messages/email-messages.operations.ts';
import { auditOperations } from './domain/audit-events/audit.operations.ts';
import { enrolmentOperations } from './domain/enrolments/enrolments.operations.ts';

export const operations: Operation[] = [...meOperations, ...courseOperations, ...sectionOperations, ...extensionOperations, ...enrolmentMethodOperations, ...storageOperations, ...webhookOperations, ...emailTemplateOperations, ...platformEmailTemplateOperations, ...activityOperations, ...wikiPageOperations, ...lessonPageOperations, ...emailMessageOperations, ...organisationOperations, ...userOperations, ...roleOperations, ...enrolmentOperations, ...auditOperations];
