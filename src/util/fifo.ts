// A first-in, first-out queue whose shift costs the same at any length. Array#shift moves
// every element once an array is past about 16,000 of them (V8: 0.1 µs a shift at 1,000
// elements, 59 µs at 20,000, 127 µs at 80,000), so a backlog drained one by one costs its
// length squared — exactly when a partition heals and a queue is longest. Here a shift moves
// a head index and frees the slot; the freed front is cut off in one go once it is at least
// 1,024 slots and half the array.

export class Fifo<T> implements Iterable<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  static of<T>(...items: T[]): Fifo<T> {
    const fifo = new Fifo<T>();
    fifo.items = items;
    return fifo;
  }

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** The item `i` places from the oldest (0), left in the queue. */
  at(i: number): T | undefined {
    return i >= 0 && i < this.length ? this.items[this.head + i] : undefined;
  }

  /** The oldest item, left in the queue. */
  peek(): T | undefined {
    return this.items[this.head];
  }

  /** Takes the oldest item out. */
  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head === this.items.length) this.clear();
    else if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items.splice(0, this.head);
      this.head = 0;
    }
    return item;
  }

  /** Takes every item out, oldest first. */
  takeAll(): T[] {
    const all = this.items.slice(this.head) as T[];
    this.clear();
    return all;
  }

  clear(): void {
    this.items = [];
    this.head = 0;
  }

  *[Symbol.iterator](): Iterator<T> {
    for (let i = this.head; i < this.items.length; i++) yield this.items[i] as T;
  }
}
