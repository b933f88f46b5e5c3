// Row types of the course content: categories, courses, sections, activities (wikis, lessons), enrolment
// methods and enrolments, storage targets and files. See tables.ts for the conventions.
import type { Bool, Json, Timestamp } from './column-values.ts';

export interface CategoriesTable {
  id: string;
  organisation_id: string;
  external_id: string | null;
  parent_id: string | null;
  name: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Timestamp | null;
}

export interface CoursesTable {
  id: string;
  organisation_id: string;
  external_id: string | null;
  category_id: string | null;
  fullname: string;
  shortname: string;
  visible: Bool;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Timestamp | null;
}

export interface SectionsTable {
  id: string;
  organisation_id: string;
  external_id: string | null;
  course_id: string;
  parent_section_id: string | null;
  sort_key: string;
  title: string | null;
  summary: Json | null;
  visible: Bool;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Timestamp | null;
}

export interface EnrolmentMethodsTable {
  id: string;
  organisation_id: string;
  external_id: string | null;
  course_id: string;
  /** The enrolment-method extension's name: manual, self, guest, cohort. */
  type: string;
  name: string | null;
  status: 'enabled' | 'disabled';
  /** Role given to people enrolled through the method. */
  role: string;
  /** JSON object; its keys depend on `type`. */
  settings: Json;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Timestamp | null;
}

/** An activity of a course, of any activity type (`wiki`, `lesson`); type-specific rows hang from it. */
export interface ActivitiesTable {
  id: string;
  organisation_id: string;
  external_id: string | null;
  course_id: string;
  section_id: string | null;
  /** The activity-type extension's name. */
  type: string;
  name: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Timestamp | null;
}

export interface WikisTable {
  id: string;
  organisation_id: string;
  activity_id: string;
  mode: 'collaborative' | 'individual' | 'group';
  created_at: Timestamp;
}

export interface SubwikisTable {
  id: string;
  organisation_id: string;
  wiki_id: string;
  /** 'common', 'user:<person id>' or 'group:<group id>': one subwiki per owner. */
  owner_key: string;
  user_id: string | null;
  group_id: string | null;
  created_at: Timestamp;
}

/** The current version of a page; `course_id` … `subwiki_group_id` never change, so they are copied here. */
export interface WikiPagesTable {
  id: string;
  organisation_id: string;
  external_id: string | null;
  activity_id: string;
  course_id: string;
  wiki_id: string;
  subwiki_id: string;
  subwiki_user_id: string | null;
  subwiki_group_id: string | null;
  title: string;
  /** Any JSON value, as JSON text. */
  body: Json;
  version: number;
  updated_by: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Timestamp | null;
}

export interface WikiPageVersionsTable {
  id: string;
  organisation_id: string;
  wiki_page_id: string;
  version: number;
  title: string;
  body: Json;
  /** The version this one restored, when it was made by a restore. */
  restored_from: number | null;
  created_by: string;
  created_at: Timestamp;
}

/** A page of a lesson activity; `course_id` is the lesson's, copied here because it never changes. */
export interface LessonPagesTable {
  id: string;
  organisation_id: string;
  external_id: string | null;
  /** The lesson activity. */
  lesson_id: string;
  course_id: string;
  title: string;
  page_type: string;
  /** JSON `{format, content}` or null. */
  contents: Json | null;
  /** JSON array of answers (buttons on content pages, choices on question pages). */
  answers: Json;
  /** Orders the pages of a lesson (fractional index, compared as text). */
  sort_key: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Timestamp | null;
}

export interface EnrolmentsTable {
  id: string;
  organisation_id: string;
  enrolment_method_id: string;
  course_id: string;
  person_id: string;
  external_id: string | null;
  role: 'student' | 'non_editing_teacher' | 'teacher';
  status: 'active' | 'suspended';
  /** null: from the start (open-ended at `ends_at` null). */
  starts_at: Timestamp | null;
  ends_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Ended (deleted through the API, with its person, course or method): no longer counts anywhere. */
  deleted_at: Timestamp | null;
}

export interface StorageTargetsTable {
  id: string;
  organisation_id: string;
  name: string;
  /** Relative to STORAGE_TARGETS_ROOT. */
  directory: string;
  /** At most one per organisation; none means the deployment's storage is the default. */
  is_default: Bool;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface FilesTable {
  id: string;
  organisation_id: string;
  /** Where the bytes were written; null: the deployment's storage. */
  storage_target_id: string | null;
  filename: string;
  content_type: string;
  size: number;
  sha256: string;
  created_by: string;
  created_at: Timestamp;
}
