/** Every `id` string anywhere in an answer's data, in document order. */
export function idsIn(value: unknown): string[] {
  const ids: string[] = [];
  const walk = (item: unknown) => {
    if (Array.isArray(item)) item.forEach(walk);
    else if (item && typeof item === "object")
      for (const [key, child] of Object.entries(item)) {
        if (key === "id" && typeof child === "string") ids.push(child);
        else walk(child);
      }
  };
  walk(value);
  return ids;
}
