// What each lesson page type expects of its answers. A content page's answers are its buttons; a question
// page's are the choices (or accepted answers) with their feedback, score and jump; the structural pages
// (end of branch, cluster, end of cluster) carry at most one answer: the jump a learner takes from them.
import type { FieldError } from '../../errors/api-error.ts';

export const pageTypeNames = ['content', 'multichoice', 'truefalse', 'shortanswer', 'numerical', 'essay', 'matching', 'end_of_branch', 'cluster', 'end_of_cluster'] as const;
export type PageTypeName = (typeof pageTypeNames)[number];

export const jumpKeywords = ['this_page', 'next_page', 'previous_page', 'end_of_lesson', 'unseen_question', 'random_question'] as const;
export type JumpKeyword = (typeof jumpKeywords)[number];

export interface AnswerValue {
  text: string;
  response: string | null;
  score: number;
  jump_to: string;
}

interface PageTypeRule {
  min: number;
  max: number;
  /** Whether an answer's text must say something (a label, a choice, an accepted answer). */
  textRequired: boolean;
  check?(answer: AnswerValue): FieldError | undefined;
}

const UNLIMITED = 100;
const NUMBER_OR_RANGE = /^\s*-?\d+(\.\d+)?\s*(:\s*-?\d+(\.\d+)?\s*)?$/;

const rules: Record<PageTypeName, PageTypeRule> = {
  content: { min: 0, max: UNLIMITED, textRequired: true },
  multichoice: { min: 2, max: UNLIMITED, textRequired: true },
  truefalse: { min: 2, max: 2, textRequired: true },
  shortanswer: { min: 1, max: UNLIMITED, textRequired: true },
  numerical: {
    min: 1,
    max: UNLIMITED,
    textRequired: true,
    check: (a) => (NUMBER_OR_RANGE.test(a.text) ? undefined : { path: '/text', code: 'invalid_format', detail: 'A numerical answer is a number (`42`, `-1.5`) or a range (`1:10`).' }),
  },
  essay: { min: 0, max: 1, textRequired: false },
  matching: {
    min: 2,
    max: UNLIMITED,
    textRequired: true,
    check: (a) => (a.response !== null && /\S/.test(a.response) ? undefined : { path: '/response', code: 'required', detail: 'A matching answer needs `response`: the item its text matches.' }),
  },
  end_of_branch: { min: 0, max: 1, textRequired: false },
  cluster: { min: 0, max: 1, textRequired: false },
  end_of_cluster: { min: 0, max: 1, textRequired: false },
};

function countRule(rule: PageTypeRule): string {
  const [phrase, n] = rule.min === rule.max ? ['exactly', rule.min] : rule.max === UNLIMITED ? ['at least', rule.min] : ['at most', rule.max];
  return `${phrase} ${n} answer${n === 1 ? '' : 's'}`;
}

/** Field errors (pointers into the page body) for answers that do not suit the page type; empty when they do. */
export function answerErrors(type: PageTypeName, answers: AnswerValue[]): FieldError[] {
  const rule = rules[type];
  const errors: FieldError[] = [];
  if (answers.length < rule.min || answers.length > rule.max) {
    errors.push({ path: '/answers', code: 'wrong_count', detail: `A ${type} page takes ${countRule(rule)}; it has ${answers.length}.` });
  }
  answers.forEach((answer, i) => {
    if (rule.textRequired && !/\S/.test(answer.text)) {
      errors.push({ path: `/answers/${i}/text`, code: 'required', detail: `Answer ${i + 1} of a ${type} page needs a text.` });
      return;
    }
    const problem = rule.check?.(answer);
    if (problem) errors.push({ ...problem, path: `/answers/${i}${problem.path}` });
  });
  return errors;
}

/** Page types that ask a question; each is a question-type extension an organisation can switch off. */
export const questionTypeNames = ['multichoice', 'truefalse', 'shortanswer', 'numerical', 'essay', 'matching'] as const;
export const isQuestionType = (type: string): boolean => (questionTypeNames as readonly string[]).includes(type);

export const isJumpKeyword = (value: string): value is JumpKeyword => (jumpKeywords as readonly string[]).includes(value);
