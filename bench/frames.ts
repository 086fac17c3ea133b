// Length-prefixed frames on a TCP socket, written together once per tick: the transport of the
// cluster bench's no-work floor (pipeline-node.ts) and of the transport bench's raw side.
//   u32 length of the rest | u8 type | u32 id | u8 partition | payload
import net from 'node:net';

export const HEADER = 10;

/** The frame types of the floor pipeline (pipeline-node.ts) and its log alone (the log bench). */
export const frameTypes = { hello: 0, append: 1, ack: 2, record: 3, submit: 4, reply: 5 } as const;

export interface Frame {
  type: number;
  id: number;
  partition: number;
  payload: Buffer;
}

/** Frames out of a socket, written together once per tick. */
export class Conn {
  private readonly out: Buffer[] = [];
  private buffered: Buffer = Buffer.alloc(0);

  constructor(
    readonly socket: net.Socket,
    onFrame: (f: Frame, c: Conn) => void,
  ) {
    socket.setNoDelay(true);
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk: Buffer) => {
      this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
      let at = 0;
      while (this.buffered.length - at >= 4) {
        const len = this.buffered.readUInt32BE(at);
        if (this.buffered.length - at - 4 < len) break;
        onFrame(
          {
            type: this.buffered.readUInt8(at + 4),
            id: this.buffered.readUInt32BE(at + 5),
            partition: this.buffered.readUInt8(at + 9),
            payload: this.buffered.subarray(at + HEADER, at + 4 + len),
          },
          this,
        );
        at += 4 + len;
      }
      this.buffered = this.buffered.subarray(at);
    });
  }

  send(type: number, id: number, partition: number, payload: Buffer): void {
    const head = Buffer.allocUnsafe(HEADER);
    head.writeUInt32BE(HEADER - 4 + payload.length, 0);
    head.writeUInt8(type, 4);
    head.writeUInt32BE(id >>> 0, 5);
    head.writeUInt8(partition, 9);
    if (this.out.length === 0) process.nextTick(() => this.flush());
    this.out.push(head, payload);
  }

  private flush(): void {
    const parts = this.out.splice(0);
    if (!this.socket.destroyed) this.socket.write(Buffer.concat(parts));
  }
}

/** A frame connection to 127.0.0.1:`port`, once connected. */
export function connectFrames(port: number, onFrame: (f: Frame, c: Conn) => void): Promise<Conn> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => resolve(new Conn(s, onFrame)));
    s.once('error', reject);
  });
}
