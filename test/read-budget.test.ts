/**
 * The live pollers' read budget (src/live/read-budget.ts): a poller reserves its interval's turn
 * before it begins the read, so that it waits holding nothing of the read; the read then takes
 * the turn it was given at once, and a turn given but left unread goes back to the others.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { ReadBudget } from "../src/live/read-budget.ts";

const rankOf = (rank: number) => () => rank;

afterEach(() => {
  vi.useRealTimers();
});

describe("ReadBudget turns", () => {
  it("a reserved turn is taken by the next read without waiting again, and counts once", async () => {
    vi.useFakeTimers();
    const budget = new ReadBudget(1, 1);
    const poller = budget.turns(rankOf(1));
    const given = vi.fn();
    poller.reserve(given);
    await vi.advanceTimersByTimeAsync(0);
    expect(given).toHaveBeenCalledTimes(1);
    // The read made in this turn goes at once, having waited 0 since it was made.
    await expect(poller.take()).resolves.toBe(0);
    // The budget's one read a second was that one: another poller waits for the next second.
    const other = budget.turns(rankOf(1));
    let waited: number | undefined;
    void other.take().then((ms) => (waited = ms));
    await vi.advanceTimersByTimeAsync(500);
    expect(waited).toBeUndefined();
    await vi.advanceTimersByTimeAsync(600);
    expect(waited).toBeGreaterThanOrEqual(900);
  });

  it("a poller that reserves while the budget is spent is called once its turn comes, in rank order", async () => {
    vi.useFakeTimers();
    const budget = new ReadBudget(1, 1);
    await budget.turns(rankOf(0)).take();
    const order: string[] = [];
    budget.turns(rankOf(5)).reserve(() => order.push("heavy"));
    budget.turns(rankOf(1)).reserve(() => order.push("light"));
    expect(budget.waitingCount).toBe(2);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(order).toEqual(["light"]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(order).toEqual(["light", "heavy"]);
    expect(budget.waitingCount).toBe(0);
  });

  it("a turn given but not read gives itself back: the next waiter goes at once", async () => {
    vi.useFakeTimers();
    const budget = new ReadBudget(1, 1);
    const follower = budget.turns(rankOf(1));
    follower.reserve(() => {});
    await vi.advanceTimersByTimeAsync(0);
    const other = budget.turns(rankOf(1));
    let waited: number | undefined;
    void other.take().then((ms) => (waited = ms));
    await vi.advanceTimersByTimeAsync(100);
    expect(waited).toBeUndefined();
    // The interval followed another gateway's read: its turn goes to the poller waiting.
    follower.unreserve();
    await vi.advanceTimersByTimeAsync(0);
    expect(waited).toBeGreaterThanOrEqual(100);
    // Given back once only: a second call gives nothing more.
    follower.unreserve();
    let third: number | undefined;
    void budget
      .turns(rankOf(1))
      .take()
      .then((ms) => (third = ms));
    await vi.advanceTimersByTimeAsync(500);
    expect(third).toBeUndefined();
  });

  it("a stopped poller's reservation is given up: its callback never runs and nothing waits for it", async () => {
    vi.useFakeTimers();
    const budget = new ReadBudget(1, 1);
    await budget.turns(rankOf(0)).take();
    const poller = budget.turns(rankOf(1));
    const given = vi.fn();
    poller.reserve(given);
    expect(budget.waitingCount).toBe(1);
    poller.close();
    expect(budget.waitingCount).toBe(0);
    await vi.advanceTimersByTimeAsync(3_000);
    expect(given).not.toHaveBeenCalled();
    // The turn it would have had is the next caller's.
    await expect(budget.turns(rankOf(1)).take()).resolves.toBe(0);
  });
});
