/**
 * The address a caller is known by, for its budgets, its subscription slots and its connections
 * alike: an IPv4 address as it is (an IPv4-mapped IPv6 address is its IPv4 address), an IPv6
 * address by its /64, the least a single subscriber is given, so that one client cannot open a
 * cap or a budget from each of its addresses.
 */
export function callerAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!address.includes(":")) return address;
  const [head = "", tail] = address.split("%")[0]!.split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  // An embedded IPv4 tail ("::1.2.3.4") stands for two groups.
  const rightGroups = right.length + (right.at(-1)?.includes(".") ? 1 : 0);
  const groups =
    tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - rightGroups)).fill("0"), ...right];
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(":")}::/64`;
}
