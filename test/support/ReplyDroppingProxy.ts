import { connect, createServer, type Server, type Socket } from 'node:net';

export interface DropPlan {
  /** True for the client's request whose reply is to be lost (one TCP chunk, as the client wrote it). */
  request: (chunk: Buffer) => boolean;
  /** Runs once the reply is lost and before any client connection reaches the server again. */
  between: () => Promise<void>;
}

/**
 * A TCP proxy in front of Redis that loses one reply, the failure no client can tell apart from a lost
 * request: armed with `drop`, it forwards the matching request, lets the server run it, and when the server
 * answers with an integer closes both sockets instead of passing the answer on. Until `between` has finished,
 * new connections wait before reaching the server, so whatever `between` writes lands before the client's
 * re-send. An error reply (NOSCRIPT before an EVAL) is passed on and the proxy keeps waiting.
 */
export class ReplyDroppingProxy {
  private plan: DropPlan | undefined;
  private gate: Promise<void> = Promise.resolve();
  private readonly sockets = new Set<Socket>();
  private dropped: { promise: Promise<void>; resolve: () => void; reject: (error: unknown) => void } | undefined;

  private constructor(
    private readonly server: Server,
    private readonly target: URL,
  ) {}

  /** Listens on an ephemeral port of 127.0.0.1 in front of `targetUrl` (a redis:// URL). */
  static async start(targetUrl: string): Promise<ReplyDroppingProxy> {
    // Connections arrive only after listen(), when `proxy` is set.
    const server = createServer((socket) => proxy.accept(socket));
    const proxy = new ReplyDroppingProxy(server, new URL(targetUrl));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  /** The target URL with the proxy's host and port. */
  get url(): string {
    const u = new URL(this.target.toString());
    u.hostname = '127.0.0.1';
    u.port = String((this.server.address() as { port: number }).port);
    return u.toString();
  }

  /** Arms one drop; the promise settles when the reply was lost and `between` has run. */
  drop(plan: DropPlan): Promise<void> {
    this.plan = plan;
    let resolve!: () => void;
    let reject!: (error: unknown) => void;
    const promise = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    this.dropped = { promise, resolve, reject };
    return promise;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private accept(client: Socket): void {
    this.sockets.add(client);
    client.on('close', () => this.sockets.delete(client));
    client.on('error', () => client.destroy());
    client.pause();
    void this.gate.then(() => {
      if (client.destroyed) return;
      const server = connect(Number(this.target.port || 6379), this.target.hostname);
      this.sockets.add(server);
      server.on('close', () => {
        this.sockets.delete(server);
        client.destroy();
      });
      server.on('error', () => server.destroy());
      client.on('close', () => server.destroy());
      let awaitingReply = false;
      client.on('data', (chunk: Buffer) => {
        if (this.plan !== undefined && !awaitingReply && this.plan.request(chunk)) awaitingReply = true;
        server.write(chunk);
      });
      server.on('data', (chunk: Buffer) => {
        if (awaitingReply && chunk[0] === 0x3a /* ':' */) {
          this.lose(client, server);
          return;
        }
        client.write(chunk);
      });
      client.resume();
    });
  }

  private lose(client: Socket, server: Socket): void {
    const plan = this.plan!;
    const dropped = this.dropped!;
    this.plan = undefined;
    client.destroy();
    server.destroy();
    this.gate = plan.between().then(dropped.resolve, (error: unknown) => {
      dropped.reject(error);
    });
  }
}
