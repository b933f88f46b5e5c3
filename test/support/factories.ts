// Factories, not fixtures: each builds real rows through the real services.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { scopes as allScopes, type RoleName } from '../../src/access/capabilities.ts';
import type { Database } from '../../src/db/database.ts';
import type { TemplateScopeLevel } from '../../src/db/tables.ts';
import type { Organisation } from '../../src/domain/organisations/organisations.repository.ts';
import type { Plan } from '../../src/domain/organisations/organisations.service.ts';
import type { Services } from '../../src/services.ts';
import { newId } from '../../src/ids.ts';
import { operatorAuthority } from '../../src/domain/users/users.service.ts';
import { generateSigningSecret } from '../../src/domain/webhooks/secrets.ts';
import { deliveriesRepository } from '../../src/domain/webhooks/webhooks.repository.ts';
import { recordAudit } from '../../src/audit/audit-log.ts';

const suffix = () => randomBytes(4).toString('hex');

export interface Caller {
  org: Organisation;
  personId: string;
  key: string;
  keyId: string;
}

/** How a factory-made caller authenticates: an API key, or an OAuth access token of a client-credentials client. */
export type CredentialKind = 'api_key' | 'oauth_token';

export function createFactories(services: Services, database: Database, endpoints: { webhookUrl: string } = { webhookUrl: 'https://127.0.0.1:9' }, app?: FastifyInstance) {
  const { db } = database;

  async function org(opts: { plan?: Plan; address?: string } = {}): Promise<Organisation> {
    return services.organisations.create({ address: opts.address ?? `org-${suffix()}.test`, name: `Org ${suffix()}`, plan: opts.plan });
  }

  async function person(o: Organisation, opts: { roles?: RoleName[]; platformAdmin?: boolean; email?: string; name?: string; password?: string } = {}) {
    const email = opts.email ?? `p-${suffix()}@example.test`;
    const created = await services.people.create({
      organisationId: o.id,
      email,
      name: opts.name ?? 'Test Person',
      roles: opts.roles ?? ['admin'],
      isPlatformAdmin: opts.platformAdmin ?? false,
      password: opts.password,
    });
    return { ...created, email };
  }

  async function apiKey(o: Organisation, personId: string, opts: { scopes?: string[]; mode?: 'live' | 'test'; serviceVersion?: string; expiresAt?: string } = {}) {
    return services.apiKeys.create({
      organisationId: o.id,
      personId,
      name: 'test key',
      scopes: opts.scopes ?? [...allScopes],
      mode: opts.mode,
      serviceVersion: opts.serviceVersion,
      expiresAt: opts.expiresAt,
    });
  }

  /**
   * An access token for `scopes`, acting as `personId`, minted the way a client gets one: a confidential
   * client-credentials client registered for that person, then POST /oauth/token.
   */
  async function accessToken(o: Organisation, personId: string, scopes: string[] = [...allScopes]): Promise<{ token: string; clientId: string }> {
    if (!app) throw new Error('accessToken needs the app (createFactories(…, app))');
    const client = await services.oauthClients.create(o.id, null, { name: 'test client', type: 'confidential', redirect_uris: [], grant_types: ['client_credentials'], scopes: scopes as never, service_person_id: personId });
    const res = await app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { host: o.address, 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}` },
      payload: 'grant_type=client_credentials',
    });
    if (res.statusCode !== 200) throw new Error(`no token: ${res.body}`);
    return { token: JSON.parse(res.body).access_token as string, clientId: client.id };
  }

  /**
   * An organisation (new unless given), a person with the given roles, and a credential with the given scopes:
   * an API key, or with `credential: 'oauth_token'` an access token (`keyId` is then the client's id).
   */
  async function caller(opts: { org?: Organisation; plan?: Plan; roles?: RoleName[]; platformAdmin?: boolean; scopes?: string[]; serviceVersion?: string; credential?: CredentialKind } = {}): Promise<Caller> {
    let o = opts.org ?? (await org());
    const p = await person(o, { roles: opts.roles, platformAdmin: opts.platformAdmin ?? true });
    const k = opts.credential === 'oauth_token' ? await accessToken(o, p.id, opts.scopes).then((a) => ({ key: a.token, id: a.clientId })) : await apiKey(o, p.id, { scopes: opts.scopes, serviceVersion: opts.serviceVersion });
    // A plan without the API entitlement refuses new credentials: they are made first, as on a plan changed later.
    if (opts.plan !== undefined && opts.plan !== o.plan) o = (await services.organisations.update(o.address, { plan: opts.plan }))!;
    return { org: o, personId: p.id, key: k.key, keyId: k.id };
  }

  /** An audit log entry as a CLI command writes one (lists need rows; only the services write them). */
  async function auditEvent(o: Organisation) {
    await recordAudit(db, {
      organisationId: o.id,
      actor: { type: 'system', id: null, name: 'factory' },
      credential: { kind: 'cli', id: null },
      via: 'cli',
      action: 'atrium org update',
      target: { type: 'organisation', id: o.id },
      outcome: 'success',
      status: 200,
      requestId: null,
      ip: null,
      userAgent: null,
      changedFields: ['name'],
    });
    const newest = await db.selectFrom('audit_events').select('id').where('organisation_id', '=', o.id).orderBy('id', 'desc').executeTakeFirstOrThrow();
    return { id: newest.id, external_id: null };
  }

  async function category(o: Organisation, input: { name?: string; external_id?: string } = {}) {
    return services.courses.createCategory(db, o.id, { name: input.name ?? 'Category', external_id: `cat-${suffix()}`, ...input });
  }

  async function course(o: Organisation, input: { fullname?: string; shortname?: string; external_id?: string; category_id?: string } = {}) {
    return services.courses.createCourse(db, o.id, { fullname: 'Course', shortname: `C-${suffix()}`, external_id: `course-${suffix()}`, ...input });
  }

  async function section(o: Organisation, input: { course_id?: string; title?: string | null; visible?: boolean; external_id?: string } = {}) {
    const courseId = input.course_id ?? (await course(o)).id;
    return services.sections.create(db, o.id, { title: 'Section', external_id: `sec-${suffix()}`, ...input, course_id: courseId });
  }

  async function enrolmentMethod(o: Organisation, input: { course_id?: string; type?: string; name?: string | null; external_id?: string; settings?: Record<string, unknown> } = {}) {
    const courseId = input.course_id ?? (await course(o)).id;
    return services.enrolmentMethods.create(db, o.id, { type: 'manual', external_id: `enrol-${suffix()}`, ...input, course_id: courseId } as never);
  }

  /** A person enrolled in a course (a new one unless named) through a manual method of it (likewise). */
  async function enrolment(o: Organisation, input: { course_id?: string; user_id?: string; enrolment_method_id?: string; external_id?: string; role?: 'student' | 'teacher'; status?: 'active' | 'suspended' } = {}) {
    const courseId = input.course_id ?? (await course(o)).id;
    const userId = input.user_id ?? (await person(o, { roles: [] })).id;
    const methodId = input.enrolment_method_id ?? (await enrolmentMethod(o, { course_id: courseId })).id;
    return services.enrolments.create(db, o.id, { external_id: `enr-${suffix()}`, ...input, course_id: courseId, user_id: userId, enrolment_method_id: methodId });
  }

  async function storageTarget(o: Organisation, input: { name?: string; directory?: string } = {}) {
    return services.storage.createTarget(db, o.id, { name: 'Target', directory: `t-${suffix()}`, ...input });
  }

  async function file(o: Organisation, personId?: string, content = 'hello') {
    const uploader = personId ?? (await person(o)).id;
    return services.storage.upload(db, o.id, uploader, { filename: 'hello.txt', content_type: 'text/plain', content_base64: Buffer.from(content).toString('base64') });
  }

  async function activity(o: Organisation, input: { course_id?: string; type?: string; name?: string; external_id?: string; settings?: { mode?: 'collaborative' | 'individual' | 'group' } } = {}) {
    const courseId = input.course_id ?? (await course(o)).id;
    return services.activities.create(db, o.id, { type: 'wiki', name: 'Wiki', external_id: `act-${suffix()}`, ...input, course_id: courseId });
  }

  /** A wiki page at version 1, or with `edits` more versions (each a new body), by `authorId` or a new person. */
  async function wikiPage(o: Organisation, input: { activity_id?: string; title?: string; body?: unknown; external_id?: string; authorId?: string; edits?: number } = {}) {
    const { authorId, edits = 0, ...fields } = input;
    const author = authorId ?? (await person(o)).id;
    const activityId = fields.activity_id ?? (await activity(o)).id;
    let page = await services.wikiPages.create(db, o.id, author, { title: `Page ${suffix()}`, body: { text: 'First draft' }, external_id: `wp-${suffix()}`, ...fields, activity_id: activityId });
    for (let i = 1; i <= edits; i++) page = await services.wikiPages.update(db, o.id, author, page.id, { body: { text: `Edit ${i}` } });
    return page;
  }

  /** A lesson activity (in a new course unless one is given). */
  async function lesson(o: Organisation, input: { course_id?: string; name?: string; external_id?: string } = {}) {
    return activity(o, { type: 'lesson', name: 'Lesson', ...input });
  }

  /** A content page at the end of a lesson (a new one unless given). */
  async function lessonPage(o: Organisation, input: { lesson_id?: string; title?: string; external_id?: string; page_type?: 'content' | 'essay' } = {}) {
    const lessonId = input.lesson_id ?? (await lesson(o)).id;
    return services.lessonPages.create(db, o.id, { title: `Page ${suffix()}`, external_id: `lp-${suffix()}`, ...input, lesson_id: lessonId });
  }

  /**
   * An email message (a draft unless `status` says otherwise), by `authorId` or a new person, to `person_ids`
   * or two new people (so that its recipients list has more than one page at limit=1).
   */
  async function emailMessage(o: Organisation, input: { subject?: string; status?: 'draft' | 'scheduled'; send_at?: string | null; person_ids?: string[]; audience?: { type: 'course'; course_id: string; roles?: Array<'student' | 'non_editing_teacher' | 'teacher'> }; external_id?: string; body?: { format: 'html' | 'markdown' | 'plain'; content: string }; authorId?: string } = {}) {
    const { authorId, person_ids, audience, ...fields } = input;
    const author = authorId ?? (await person(o)).id;
    const people = person_ids ?? [(await person(o)).id, (await person(o)).id];
    return services.emailMessages.create(db, o.id, author, {
      subject: `Message ${suffix()}`,
      body: { format: 'plain', content: 'Hello from the tests.' },
      external_id: `em-${suffix()}`,
      ...fields,
      audience: audience ?? { type: 'people', person_ids: people },
    });
  }

  const templateDraft = { subject: 'Welcome, {{user.firstname}}', variable_refs: ['user.firstname'] };

  /**
   * An organisation template (tenant scope unless `query` says otherwise) with a published version and, newer,
   * a draft; each call publishes the draft there was and writes a new one.
   */
  async function emailTemplate(o: Organisation, input: { message_key?: string; query?: { language: string; level?: TemplateScopeLevel; scope_id?: string } } = {}) {
    const messageKey = input.message_key ?? 'enrolment_welcome';
    const query = input.query ?? { language: 'en' };
    await services.emailTemplates.saveDraft(db, o.id, messageKey, query, templateDraft);
    const published = await services.emailTemplates.publish(db, o.id, messageKey, query);
    const draft = (await services.emailTemplates.saveDraft(db, o.id, messageKey, query, { ...templateDraft, subject: `Hello again ${suffix()}` })).version;
    return { messageKey, query, published, draft };
  }

  /** The same for the deployment's platform template of a message and language. */
  async function platformEmailTemplate(o: Organisation, input: { message_key?: string; language?: string } = {}) {
    const messageKey = input.message_key ?? 'enrolment_welcome';
    const language = input.language ?? 'en';
    await services.platformEmailTemplates.saveDraft(db, o.id, messageKey, language, templateDraft);
    const published = await services.platformEmailTemplates.publish(db, o.id, messageKey, language);
    const draft = (await services.platformEmailTemplates.saveDraft(db, o.id, messageKey, language, { ...templateDraft, subject: `Hello again ${suffix()}` })).version;
    return { messageKey, language, published, draft };
  }

  /** A subscription as operation 6 makes it, minus the network: the ping is taken as answered. */
  async function webhookSubscription(o: Organisation, input: { event_types?: string[]; url?: string; filters?: Record<string, string | string[]> } = {}) {
    const verified = { subscriptionId: newId(), secret: generateSigningSecret(), verifiedAt: new Date().toISOString() };
    const url = input.url ?? `${endpoints.webhookUrl}/hooks/${suffix()}`;
    return services.webhooks.create(db, o.id, { event_types: ['*'], ...input, url }, verified);
  }

  async function customRole(o: Organisation, input: { key?: string; capabilities?: string[] } = {}) {
    return services.roles.create(db, o.id, { key: input.key ?? `role_${suffix()}`, name: 'Custom role', capabilities: input.capabilities ?? ['course/view'] });
  }

  /**
   * One existing resource per collection, for registry-driven suites that need a real id in a path
   * (`/sections/{id}` → a section). A new area adds its collection here.
   */
  const resourceFor: Record<string, (o: Organisation, related?: Record<string, unknown>) => Promise<{ id: string; external_id: string | null }>> = {
    sections: (o) => section(o),
    courses: (o) => course(o),
    categories: (o) => category(o),
    // Of the course the same body names, if it names one first (an enrolment's example: course, user, method).
    enrolment_methods: (o, related) => enrolmentMethod(o, typeof related?.course_id === 'string' ? { course_id: related.course_id } : {}),
    enrolments: (o) => enrolment(o),
    webhook_subscriptions: (o) => webhookSubscription(o),
    storage_targets: async (o) => ({ ...(await storageTarget(o)), external_id: null }),
    files: async (o) => ({ ...(await file(o)), external_id: null }),
    activities: (o) => activity(o),
    // Two versions, so that restoring version 1 (the restore operation's example) changes something.
    wiki_pages: (o) => wikiPage(o, { edits: 1 }),
    lessons: (o) => lesson(o),
    lesson_pages: (o) => lessonPage(o),
    email_messages: (o) => emailMessage(o),
    // Roles are named by key in paths; parametersFor gives their operations one.
    roles: async (o) => ({ id: (await customRole(o)).key, external_id: null }),
    users: (o) => services.users.create(db, o.id, operatorAuthority, { email: `u-${suffix()}@example.test`, name: 'User', roles: ['teacher'], external_id: `user-${suffix()}` }),
    audit_events: (o) => auditEvent(o),
  };

  /**
   * Path parameters other than `{id}`/`{external_id}`, and required query parameters, per operation id: built
   * afresh for each request (a restore gets a published version that is not the draft, a publish a draft).
   */
  type ExampleParameters = { path: Record<string, string>; query?: Record<string, string> };
  const orgTemplateParameters = async (o: Organisation): Promise<ExampleParameters> => {
    const t = await emailTemplate(o);
    return { path: { message_key: t.messageKey, version_id: t.published.id }, query: t.query };
  };
  const platformTemplateParameters = async (o: Organisation): Promise<ExampleParameters> => {
    const t = await platformEmailTemplate(o);
    return { path: { message_key: t.messageKey, language: t.language, version_id: t.published.id } };
  };
  const parametersFor: Record<string, (o: Organisation) => Promise<ExampleParameters>> = {
    // A subscription with a few deliveries in its log.
    listWebhookDeliveries: async (o) => {
      const subscription = await webhookSubscription(o);
      for (let i = 0; i < 3; i++) await services.webhooks.sendTest(db, o.id, subscription.id);
      return { path: { id: subscription.id } };
    },
    // A delivery that has finished (succeeded), so that it can be resent.
    resendWebhookDelivery: async (o) => {
      const subscription = await webhookSubscription(o);
      const delivery = await services.webhooks.sendTest(db, o.id, subscription.id);
      await deliveriesRepository.update(db, delivery.id, { status: 'succeeded', delivered_at: new Date().toISOString() });
      return { path: { id: subscription.id, delivery_id: delivery.id } };
    },
    // A custom role of the organisation, held by nobody (so that it can be deleted).
    ...Object.fromEntries(
      ['getRole', 'updateRole', 'deleteRole'].map((id) => [id, async (o: Organisation) => ({ path: { key: (await customRole(o)).key } })]),
    ),
    ...Object.fromEntries(['getEmailTemplateVersions', 'saveEmailTemplateDraft', 'publishEmailTemplateDraft', 'restoreEmailTemplateVersion'].map((id) => [id, orgTemplateParameters])),
    ...Object.fromEntries(
      ['getPlatformEmailTemplateVersions', 'savePlatformEmailTemplateDraft', 'publishPlatformEmailTemplateDraft', 'restorePlatformEmailTemplateVersion'].map((id) => [id, platformTemplateParameters]),
    ),
  };

  /** State an operation needs before it can succeed, where the operation's path and body cannot carry it. */
  const preconditions: Record<string, (o: Organisation) => Promise<void>> = {
    // Operation 5 changes something only while another target is the default.
    restoreDeploymentStorage: async (o) => {
      await services.storage.makeDefault(db, o.id, (await storageTarget(o)).id);
    },
  };

  return { customRole, accessToken, parametersFor, emailTemplate, platformEmailTemplate, preconditions, org, person, apiKey, caller, category, course, section, webhookSubscription, webhookUrl: endpoints.webhookUrl, enrolmentMethod, enrolment, storageTarget, file, activity, wikiPage, lesson, lessonPage, emailMessage, resourceFor };
}

export type Factories = ReturnType<typeof createFactories>;
