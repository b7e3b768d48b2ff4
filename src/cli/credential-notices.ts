// How a CLI command's credential changes reach the instances that cache credentials (PostgreSQL + Redis): through REDIS_URL.
import type { Config } from '../config.ts';
import { storeAnnouncingTo } from '../store/credentials/announcing-store.ts';
import { announcerOver, type CredentialAnnouncer } from '../store/credentials/credential-versions.ts';
import { closeRedis, openRedis } from '../store/redis-client.ts';
import type { Store } from '../store/store.ts';
import { printNote, type CliContext } from './cli-context.ts';

export interface NoticedStore {
  readonly store: Store;
  close(): Promise<void>;
}

/**
 * `store`, announcing every credential change on PostgreSQL: to Redis with REDIS_URL (the service's own, or the instances
 * never hear of it); without, a note on stderr saying how long instances may still answer with the old credentials.
 */
export async function withCredentialNotices(store: Store, config: Config, context: CliContext): Promise<NoticedStore> {
  if (config.database.engine !== 'postgres') return { store, close: async () => {} };
  if (config.redis === null) {
    let noted = false;
    const note: CredentialAnnouncer = {
      credentialsChanged: async () => {
        if (noted) return;
        noted = true;
        const seconds = Math.ceil(config.credentialCacheMaxAgeMs / 1000);
        printNote(
          context,
          `note: neither REDIS_URL nor REDIS_CLUSTER_NODES is set, so instances that cache credentials (PostgreSQL with Redis) were not told of this change: ` +
            `they may answer with the old credentials for up to ${seconds} s (CREDENTIAL_CACHE_MAX_AGE_MS). Run the CLI with the service's REDIS_URL (or REDIS_CLUSTER_NODES).`,
        );
      },
    };
    return { store: storeAnnouncingTo(store, note, config), close: async () => {} };
  }
  const redis = await openRedis(config.redis, { warn: (_details, message) => printNote(context, `note: ${message}`) });
  return {
    store: storeAnnouncingTo(store, announcerOver(redis, config), config),
    // Bounded: a command that did its work exits even when Redis stops answering.
    close: () => closeRedis(redis),
  };
}
