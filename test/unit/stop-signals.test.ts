import { handleStopSignals } from '../../src/stop-signals';

/** process.exit, recorded instead of run (the second signal exits at once). */
function recordExits(): { codes: number[]; restore: () => void } {
  const codes: number[] = [];
  const spy = jest.spyOn(process, 'exit').mockImplementation(((code?: number) => {
    codes.push(code ?? 0);
    return undefined as never;
  }) as typeof process.exit);
  return { codes, restore: () => spy.mockRestore() };
}

describe('handleStopSignals (the command and a chaincode: first signal stops, second exits)', () => {
  test('a signal before the stop is known is kept, and the stop runs once it is given', () => {
    const warnings: string[] = [];
    const signals = handleStopSignals({ warn: (line) => warnings.push(line), exitCodeOnSecond: 3 });
    try {
      process.emit('SIGTERM', 'SIGTERM');
      const stops: string[] = [];
      signals.stopWith((signal) => stops.push(signal));
      expect(stops).toEqual(['SIGTERM']);
      expect(warnings).toEqual([]);
    } finally {
      signals.remove();
    }
  });

  test('a second signal is warned of (through the warn given last) and exits with the code given', () => {
    const exits = recordExits();
    const signals = handleStopSignals({ warn: () => undefined, exitCodeOnSecond: 3 });
    try {
      const stops: string[] = [];
      const logged: string[] = [];
      signals.stopWith((signal) => stops.push(signal));
      signals.warnWith((line) => logged.push(line));
      process.emit('SIGINT', 'SIGINT');
      expect(stops).toEqual(['SIGINT']);
      expect(exits.codes).toEqual([]);
      process.emit('SIGTERM', 'SIGTERM');
      expect(logged).toEqual(['received SIGTERM again; exiting now']);
      expect(exits.codes).toEqual([3]);
    } finally {
      signals.remove();
      exits.restore();
    }
  });

  test('remove() takes the listeners away', () => {
    const before = process.listenerCount('SIGTERM') + process.listenerCount('SIGINT');
    const signals = handleStopSignals({ warn: () => undefined, exitCodeOnSecond: 1 });
    expect(process.listenerCount('SIGTERM') + process.listenerCount('SIGINT')).toBe(before + 2);
    signals.remove();
    expect(process.listenerCount('SIGTERM') + process.listenerCount('SIGINT')).toBe(before);
  });
});
