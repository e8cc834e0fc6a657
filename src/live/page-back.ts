/** How a live poller reads back from the newest items to where it stood, within its bound. */
import type { LivePage, LiveQuestion, Position } from "./live-question.ts";
import { inOrder, type Placed } from "./stream-heads.ts";

/** An item's place against what a read seeks: before it ("old"), in it, or after its end ("ahead"). */
export type PlaceInRead = "old" | "sought" | "ahead";

export interface PagedBack<Item> {
  /** The items sought, oldest first: the newest `maxCatchUp` when there were more. */
  found: Placed<Item>[];
  /** More than `maxCatchUp` were sought, or the pages ran out before an old item told where the read began. */
  gap: boolean;
}

/**
 * Reads the question's pages, newest first, until an item is older than what is sought (then
 * the gap is filled) or `maxCatchUp` + 1 items were read: more than `maxCatchUp` sought, or not
 * knowing, is a gap, and the newest `maxCatchUp` are kept, oldest first. Items ahead of what is
 * sought are read but not counted. `beforePage` may stop the reading before a page: then undefined.
 */
export async function pageBack<Item>(
  question: Pick<LiveQuestion<Item>, "pageSize" | "position">,
  maxCatchUp: number,
  read: (pageSize: number, pageToken: string | undefined) => Promise<LivePage<Item>>,
  classify: (position: Position) => PlaceInRead,
  beforePage: (page: number) => Promise<boolean>,
): Promise<PagedBack<Item> | undefined> {
  const found: Placed<Item>[] = [];
  let counted = 0;
  let pageToken: string | undefined;
  let complete = false;
  for (let page = 0; !complete && counted <= maxCatchUp; page += 1) {
    if (!(await beforePage(page))) return undefined;
    const response = await read(Math.min(question.pageSize, maxCatchUp + 1 - counted), pageToken);
    for (const item of response.items) {
      const position = question.position(item);
      const kind = position && classify(position);
      if (kind === "ahead") continue;
      counted += 1;
      if (kind === "old") complete = true;
      else if (kind === "sought" && position) found.push({ item, position });
    }
    if (!response.nextPageToken) complete = true;
    pageToken = response.nextPageToken;
  }
  const gap = !complete || found.length > maxCatchUp;
  return { found: inOrder(found.reverse()).slice(-maxCatchUp), gap };
}
