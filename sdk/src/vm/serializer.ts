/**
 * Runs async steps one after another, in call order: each starts once the previous one settled,
 * whether it resolved or threw (its caller gets its own result or error). For a VM's
 * read-check-write sections (issuing, accepting) and a service's read-modify-write of a user's keys.
 */
export function serializer(): <T>(step: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return (step) => {
    const run = tail.then(step);
    tail = run.catch(() => undefined);
    return run;
  };
}
