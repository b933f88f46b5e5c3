// Builds every service once, with its explicit dependencies. No container, no module-level singletons:
// a test builds its own set with its own clock.
import type { Clock } from './clock.ts';
import type { Db } from './db/database.ts';
import type { CursorCodec } from './operations/pagination.ts';
import type { Revisions } from './operations/revisions.ts';
import { publicOrigin, type PublicOriginSettings } from './public-origin.ts';
import { createApiKeyService } from './auth/api-keys.service.ts';
import { createSessionService } from './auth/sessions.service.ts';
import { createOAuthClientService } from './auth/oauth/clients.service.ts';
import { createOAuthClientStore } from './auth/oauth/client-store.ts';
import { createAccessTokenAuthenticator } from './auth/oauth/access-tokens.ts';
import { createMcpSettingsService } from './mcp/mcp-settings.service.ts';
import { createMcpCredentials } from './mcp/mcp-credential.ts';
import { createMetadataDocumentFetch } from './auth/oauth/client-id-metadata.ts';
import { createOrganisationService } from './domain/organisations/organisations.service.ts';
import { createPeopleService } from './domain/people/people.service.ts';
import { createUserService } from './domain/users/users.service.ts';
import { createRoleService } from './domain/roles/roles.service.ts';
import { createCourseService } from './domain/courses/courses.service.ts';
import { createSectionService } from './domain/sections/sections.service.ts';
import { createEventRecorder } from './events/outbox.ts';
import { createWebhookService } from './domain/webhooks/webhooks.service.ts';
import { createEndpointGuard } from './net/endpoint-guard.ts';
import { createHttpSender } from './domain/webhooks/http-sender.ts';
import { createSecretBox } from './crypto/secret-box.ts';
import { createWebhookDispatcher } from './domain/webhooks/dispatcher.ts';
import { createWebhookDeliverer } from './domain/webhooks/deliverer.ts';
import { createExtensionService } from './domain/extensions/extensions.service.ts';
import { createEnrolmentMethodService } from './domain/enrolment-methods/enrolment-methods.service.ts';
import { createStorageService } from './domain/storage/storage.service.ts';
import { diskFileStore } from './domain/storage/file-store.ts';
import { createEmailTemplateService } from './domain/email-templates/email-templates.service.ts';
import { createPlatformEmailTemplateService } from './domain/platform-email-templates/platform-email-templates.service.ts';
import { createActivityService } from './domain/activities/activities.service.ts';
import { createWikiPageService } from './domain/wiki-pages/wiki-pages.service.ts';
import { wikiActivityType } from './domain/wiki-pages/wiki.activity-type.ts';
import { createLessonPageService } from './domain/lesson-pages/lesson-pages.service.ts';
import { createEmailMessageService } from './domain/email-messages/email-messages.service.ts';
import { createMailer } from './mail/mailer.ts';
import type { MailSettings } from './mail/mail.ts';
import { createMailLogReader } from './domain/mail-log/mail-log.service.ts';
import { createDeletionService } from './domain/deletions/deletions.service.ts';
import { createEnrolmentService } from './domain/enrolments/enrolments.service.ts';
import { createAuditService } from './domain/audit-events/audit.service.ts';

export interface ServiceDeps {
  db: Db;
  clock: Clock;
  webhooks: { allowHosts: string[]; ca: string[] | undefined; secretKey: string; leaseMs: number };
  storage: { dir: string; targetsRoot: string };
  /** SMTP_URL and MAIL_FROM: without an SMTP server, mail goes to the mail log. */
  mail: MailSettings;
  cursors: CursorCodec;
  revisions: Revisions;
  /** Links in mails point at the organisation's public origin (docs/conventions.md#addresses-and-requests). */
  publicOrigin: PublicOriginSettings;
  /** AUDIT_RETENTION_DAYS: how long audit log entries are kept. */
  auditRetentionDays?: number;
  onBackgroundError?: (err: unknown) => void;
}

export function createServices(baseDeps: ServiceDeps) {
  const events = createEventRecorder(baseDeps);
  const deps = { ...baseDeps, events };
  const extensions = createExtensionService(deps);
  const organisations = createOrganisationService(deps);
  const mail = createMailer(baseDeps.mail, deps);
  // One SSRF guard, HTTPS sender and secret box for the API (verification pings) and the delivery worker.
  const webhookParts = {
    guard: createEndpointGuard(baseDeps.webhooks.allowHosts),
    send: createHttpSender({ ca: baseDeps.webhooks.ca }),
    secrets: createSecretBox(baseDeps.webhooks.secretKey),
  };
  const apiKeys = createApiKeyService(deps);
  // Deleting a course, a person or an enrolment method ends its enrolments: their services call this one.
  const enrolments = createEnrolmentService(deps);
  const oauthTokens = createAccessTokenAuthenticator(deps);
  return {
    organisations,
    people: createPeopleService({ ...deps, enrolments }),
    users: createUserService({ ...deps, mail, enrolments }),
    roles: createRoleService(deps),
    sessions: createSessionService(deps),
    oauthClients: createOAuthClientService(deps),
    oauthClientStore: createOAuthClientStore(deps),
    oauthTokens,
    mcpSettings: createMcpSettingsService(deps),
    // OAuth Client ID Metadata Documents are fetched like webhooks are sent: through the SSRF guard.
    clientIdMetadataFetch: createMetadataDocumentFetch({ guard: webhookParts.guard, ca: baseDeps.webhooks.ca }),
    // How /mcp authenticates its caller.
    mcpCredentials: createMcpCredentials({ apiKeys: apiKeys.authenticator, accessTokens: oauthTokens }),
    apiKeys,
    courses: createCourseService({ ...deps, enrolments }),
    enrolments,
    sections: createSectionService(deps),
    emailTemplates: createEmailTemplateService(deps),
    platformEmailTemplates: createPlatformEmailTemplateService(deps),
    extensions,
    enrolmentMethods: createEnrolmentMethodService({ ...deps, extensions, enrolments }),
    // One entry per activity type that has settings or rows of its own (see activities/activity-types.ts).
    activities: createActivityService({ ...deps, extensions, types: { wiki: wikiActivityType } }),
    wikiPages: createWikiPageService(deps),
    lessonPages: createLessonPageService({ ...deps, extensions }),
    emailMessages: createEmailMessageService({ ...deps, mail }),
    mail,
    mailLog: createMailLogReader(deps),
    deletions: createDeletionService(deps),
    audit: createAuditService({ ...deps, retentionDays: baseDeps.auditRetentionDays }),
    storage: createStorageService({
      ...deps,
      store: diskFileStore,
      storageDir: baseDeps.storage.dir,
      storageTargetsRoot: baseDeps.storage.targetsRoot,
    }),
    webhooks: createWebhookService({ ...deps, ...webhookParts }),
    webhookDelivery: {
      dispatch: createWebhookDispatcher(deps),
      deliver: createWebhookDeliverer({
        ...deps,
        ...webhookParts,
        leaseMs: baseDeps.webhooks.leaseMs,
        notify: async (organisationId, to, subject, text, adminPath) => {
          const org = await organisations.findById(organisationId);
          const link = org ? `\n\n${publicOrigin(baseDeps.publicOrigin, org.address)}${adminPath}` : '';
          for (const address of to) await mail.send({ organisationId, to: { name: '', address }, subject, text: text + link });
        },
      }),
    },
    events,
    cursors: deps.cursors,
    revisions: deps.revisions,
  };
}

export type Services = ReturnType<typeof createServices>;

// Handlers reach the services through their operation context; the framework declares the slot, this bundle fills it.
declare module './operations/operation.ts' {
  interface OperationServices extends Services {}
}
