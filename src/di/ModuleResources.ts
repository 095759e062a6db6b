/**
 * What one `createSessionCompactionModule` opened on the application's behalf (a repository it built from a
 * backend name or a configuration file), closed together by `closeSessionCompaction(container)`. Instances the
 * application passed in stay the application's to close: the module did not open them.
 */
export class ModuleResources {
  private readonly closers: (() => Promise<void> | void)[] = [];
  private closing: Promise<void> | undefined;

  /** Registers a resource's close; a resource opened after `close()` began is closed at once. */
  track(close: () => Promise<void> | void): void {
    if (this.closing !== undefined) {
      void Promise.resolve()
        .then(close)
        .catch(() => undefined);
      return;
    }
    this.closers.push(close);
  }

  /** Closes every tracked resource, newest first; any later call resolves with the first call's outcome. */
  close(): Promise<void> {
    this.closing ??= this.closeAll();
    return this.closing;
  }

  private async closeAll(): Promise<void> {
    const errors: unknown[] = [];
    // Newest first: a resource may use an older one while it shuts down.
    for (const close of this.closers.splice(0).reverse()) {
      try {
        await close();
      } catch (error) {
        errors.push(error);
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, 'session-compaction: several resources failed to close');
  }
}
