// Extensions are compiled into the application (spec: What the service does 7): there is no runtime plugin
// loader. Each is switched on or off per organisation; all are on until an administrator switches one off.
export const extensionKinds = ['activity_type', 'block', 'enrolment_method', 'login_method', 'question_type', 'report', 'theme', 'integration'] as const;
export type ExtensionKind = (typeof extensionKinds)[number];

interface ExtensionEntry {
  kind: ExtensionKind;
  /** The name resources use for it: an enrolment method's `type`, an activity's `type`. */
  name: string;
  title: string;
  description: string;
}

const extension = (kind: ExtensionKind, name: string, title: string, description: string): ExtensionEntry => ({ kind, name, title, description });

export const extensionCatalog = {
  'enrol_manual': extension('enrolment_method', 'manual', 'Manual enrolments', 'Teachers and administrators enrol people by hand.'),
  'enrol_self': extension('enrolment_method', 'self', 'Self enrolment', 'People enrol themselves, optionally with an enrolment key.'),
  'enrol_guest': extension('enrolment_method', 'guest', 'Guest access', 'Anyone may look into the course without enrolling.'),
  'enrol_cohort': extension('enrolment_method', 'cohort', 'Cohort sync', 'Members of a cohort are enrolled and unenrolled with it.'),
  'mod_wiki': extension('activity_type', 'wiki', 'Wiki', 'Collaborative pages with full version history.'),
  'mod_lesson': extension('activity_type', 'lesson', 'Lesson', 'Pages of content and questions with branching.'),
  'qtype_multichoice': extension('question_type', 'multichoice', 'Multiple choice', 'Lesson questions with one or more right choices.'),
  'qtype_truefalse': extension('question_type', 'truefalse', 'True/false', 'Lesson questions answered true or false.'),
  'qtype_shortanswer': extension('question_type', 'shortanswer', 'Short answer', 'Lesson questions answered with a word or phrase.'),
  'qtype_numerical': extension('question_type', 'numerical', 'Numerical', 'Lesson questions answered with a number or within a range.'),
  'qtype_essay': extension('question_type', 'essay', 'Essay', 'Lesson questions answered in free text, graded by a teacher.'),
  'qtype_matching': extension('question_type', 'matching', 'Matching', 'Lesson questions that pair items with their matches.'),
  'block_calendar': extension('block', 'calendar', 'Calendar block', 'Upcoming events beside the course.'),
  'report_log': extension('report', 'log', 'Logs report', 'Who did what, when.'),
} as const satisfies Record<string, ExtensionEntry>;

export type ExtensionId = keyof typeof extensionCatalog;

export const isExtensionId = (id: string): id is ExtensionId => Object.hasOwn(extensionCatalog, id);

/** The extension that provides a resource type, e.g. ('enrolment_method', 'self') → 'enrol_self'. */
export function extensionFor(kind: ExtensionKind, name: string): ExtensionId | undefined {
  return (Object.keys(extensionCatalog) as ExtensionId[]).find((id) => extensionCatalog[id].kind === kind && extensionCatalog[id].name === name);
}

export function namesOfKind(kind: ExtensionKind): string[] {
  return Object.values(extensionCatalog as Record<string, ExtensionEntry>).filter((e) => e.kind === kind).map((e) => e.name);
}
