/**
 * Realistic datastore content for tests and the demo: rels shaped like swamp's data trees, with
 * deterministic bytes so any copy can be checked without keeping the originals around.
 *
 * @module
 */
import type { ObjectStoreClient } from "../../js/io/s3.ts";

const encoder = new TextEncoder();

/**
 * `count` rels spread over the data trees, shaped like swamp's (`data/aws/ec2/vpc/m-7/state/2/raw`,
 * `workflow-runs/wr-3/workflow-run-1.yaml`, ...).
 *
 * @param count how many
 * @param salt varies the names between sets
 */
export function datastoreRels(count: number, salt = ""): string[] {
  const rels: string[] = [];
  for (let i = 0; i < count; i++) {
    const n = `${salt}${i}`;
    switch (i % 6) {
      case 0:
      case 1:
        rels.push(`data/aws/ec2/vpc/m-${n}/state/${i % 3}/raw`);
        break;
      case 2:
        rels.push(`workflow-runs/wr-${Math.floor(i / 12)}/workflow-run-${n}.yaml`);
        break;
      case 3:
        rels.push(`outputs/aws/s3/bucket/o-${n}/result/1/raw`);
        break;
      case 4:
        rels.push(`definitions-evaluated/aws/iam/role/d-${n}/def.yaml`);
        break;
      default:
        rels.push(`logs/run-${n}.log`);
    }
  }
  return rels;
}

/**
 * The deterministic content of a rel (about 100–300 bytes; `version` changes it).
 *
 * @param rel the file's rel
 * @param version a content generation
 */
export function contentOf(rel: string, version = 0): Uint8Array {
  const line = `${rel} v${version}\n`;
  return encoder.encode(line.repeat(1 + (rel.length % 5)));
}

/**
 * Puts `objects` with bounded concurrency.
 *
 * @param store target store
 * @param objects key and body pairs
 * @param concurrency puts in flight
 */
export async function putAll(
  store: ObjectStoreClient,
  objects: [string, Uint8Array][],
  concurrency = 32,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < objects.length) {
        const [key, body] = objects[next++];
        await store.putObject(key, body);
      }
    }),
  );
}

/**
 * Every file under `root` (relative paths with `/`), recursively.
 *
 * @param root folder to list
 */
export async function listTree(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (folder: string, rel: string) => {
    for await (const entry of Deno.readDir(folder)) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory) await walk(`${folder}/${entry.name}`, path);
      else out.push(path);
    }
  };
  try {
    await walk(root, "");
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return out.sort();
}
