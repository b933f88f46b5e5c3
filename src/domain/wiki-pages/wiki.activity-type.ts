// The wiki activity type: a wiki activity owns one wiki, whose mode (collaborative, individual, group)
// decides which subwiki a page goes into. The mode is fixed at creation, as pages already sit in subwikis.
import { newId } from '../../ids.ts';
import type { ActivitySettingsValue, ActivityType } from '../activities/activity-types.ts';
import { wikisRepository } from './wikis.repository.ts';

const modeOf = (settings: ActivitySettingsValue) => settings.mode ?? 'collaborative';

export const wikiActivityType: ActivityType = {
  settingKeys: ['mode'],
  async create(db, organisationId, activity, settings) {
    const mode = modeOf(settings);
    await wikisRepository.insert(db, { id: newId(), organisation_id: organisationId, activity_id: activity.id, mode, created_at: activity.created_at });
    return { mode };
  },
  createInOneStatement(settings) {
    const mode = modeOf(settings);
    return { effects: [wikisRepository.insertWithActivitySql(mode)], settings: { mode } };
  },
  async settingsOf(db, organisationId, activityIds) {
    return new Map((await wikisRepository.byActivities(db, organisationId, activityIds)).map((w) => [w.activity_id, { mode: w.mode }]));
  },
  settingsJsonSql: (organisationId, activityId) => wikisRepository.settingsJsonSql(organisationId, activityId),
};
