import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Snowball } from '../../../src/consensus/snowball/snowball.js';
import { Snowflake, topChoice } from '../../../src/consensus/snowball/snowflake.js';

const P = { alpha: 15, betaVirtuous: 20, betaRogue: 30 };
const votes = (entries: Record<string, number>) => new Map(Object.entries(entries));

const test = suite('snowball');

test('virtuous: finalizes after exactly betaVirtuous consecutive successful polls', () => {
  const sb = new Snowball(P, 'A');
  assert.is(sb.preference, 'A');
  assert.not.ok(sb.rogue);
  for (let i = 1; i < 20; i++) {
    assert.ok(sb.recordPoll(votes({ A: 15 })));
    assert.is(sb.confidence, i);
    assert.not.ok(sb.finalized, `finalized after ${i}`);
  }
  sb.recordPoll(votes({ A: 20 }));
  assert.ok(sb.finalized);
  assert.is(sb.preference, 'A');
  assert.is(sb.strength('A'), 20);
});

test('rogue: once a conflicting choice is added, betaRogue polls are needed', () => {
  const sb = new Snowball(P, 'A');
  for (let i = 0; i < 10; i++) sb.recordPoll(votes({ A: 16 }));
  sb.add('B');
  sb.add('B'); // adding a known choice changes nothing
  assert.ok(sb.rogue);
  assert.equal([...sb.choices], ['A', 'B']);
  for (let i = 10; i < 29; i++) {
    sb.recordPoll(votes({ A: 16, B: 4 }));
    assert.not.ok(sb.finalized, `finalized after ${i + 1}`);
  }
  // The confidence gathered while virtuous carries over; the threshold is now 30.
  assert.is(sb.confidence, 29);
  sb.recordPoll(votes({ A: 16, B: 4 }));
  assert.ok(sb.finalized);
  assert.is(sb.preference, 'A');
});

test('an unsuccessful poll resets the confidence but not the strength', () => {
  const sb = new Snowball(P, 'A');
  for (let i = 0; i < 19; i++) sb.recordPoll(votes({ A: 15 }));
  assert.not.ok(sb.recordPoll(votes({ A: 14 })));
  assert.is(sb.confidence, 0);
  assert.is(sb.strength('A'), 19);
  for (let i = 0; i < 19; i++) sb.recordPoll(votes({ A: 15 }));
  assert.not.ok(sb.finalized);
  sb.recordUnsuccessfulPoll();
  assert.is(sb.confidence, 0);
  for (let i = 0; i < 20; i++) sb.recordPoll(votes({ A: 15 }));
  assert.ok(sb.finalized);
});

test('alpha edge: exactly alpha succeeds, alpha - 1 fails, nothing and unknown choices fail', () => {
  const sb = new Snowball(P, 'A');
  assert.ok(sb.recordPoll(votes({ A: 15 })));
  assert.not.ok(sb.recordPoll(votes({ A: 14 })));
  assert.is(sb.confidence, 0);
  assert.ok(sb.recordPoll(votes({ A: 15 })));
  assert.not.ok(sb.recordPoll(new Map()));
  assert.is(sb.confidence, 0);
  // Votes for a choice the instance does not know are ignored.
  assert.not.ok(sb.recordPoll(votes({ Z: 20 })));
  assert.is(sb.preference, 'A');
  // Split votes: neither reaches alpha.
  sb.add('B');
  assert.not.ok(sb.recordPoll(votes({ A: 10, B: 10 })));
});

test('preference follows the strongest choice; a new choice must exceed the maximum to take over', () => {
  const sb = new Snowball(P, 'A');
  sb.add('B');
  for (let i = 0; i < 3; i++) sb.recordPoll(votes({ A: 15 }));
  for (let i = 0; i < 3; i++) sb.recordPoll(votes({ B: 15 }));
  // A tie in strength keeps the earlier preference.
  assert.is(sb.strength('A'), 3);
  assert.is(sb.strength('B'), 3);
  assert.is(sb.preference, 'A');
  // But the snowflake confidence is on B: three in a row.
  assert.is(sb.confidence, 3);
  sb.recordPoll(votes({ B: 15 }));
  assert.is(sb.preference, 'B');
  assert.is(sb.confidence, 4);
  // Switching back resets the confidence to 1.
  sb.recordPoll(votes({ A: 15, B: 5 }));
  assert.is(sb.confidence, 1);
  assert.is(sb.preference, 'B');
});

test('when the snowflake finalizes on a weaker choice, that choice is the preference', () => {
  const sb = new Snowball({ alpha: 2, betaVirtuous: 2, betaRogue: 3 }, 'A');
  sb.add('B');
  for (let i = 0; i < 2; i++) {
    sb.recordPoll(votes({ A: 3 }));
    sb.recordPoll(votes({ A: 3 }));
    sb.recordPoll(votes({ A: 1 })); // unsuccessful: confidence back to 0
  }
  assert.is(sb.strength('A'), 4);
  for (let i = 0; i < 2; i++) sb.recordPoll(votes({ B: 2 }));
  assert.is(sb.preference, 'A');
  assert.not.ok(sb.finalized);
  sb.recordPoll(votes({ B: 2 }));
  assert.ok(sb.finalized);
  assert.is(sb.preference, 'B');
});

test('a finalized instance ignores further input', () => {
  const sb = new Snowball({ alpha: 1, betaVirtuous: 1, betaRogue: 2 }, 'A');
  sb.recordPoll(votes({ A: 1 }));
  assert.ok(sb.finalized);
  sb.add('B');
  assert.not.ok(sb.recordPoll(votes({ B: 5 })));
  sb.recordUnsuccessfulPoll();
  assert.ok(sb.finalized);
  assert.is(sb.preference, 'A');
  assert.is(sb.confidence, 1);
});

test('three or more choices', () => {
  const sb = new Snowball({ alpha: 3, betaVirtuous: 2, betaRogue: 4 }, 'A');
  sb.add('B');
  sb.add('C');
  sb.recordPoll(votes({ A: 1, B: 1, C: 3 }));
  assert.is(sb.preference, 'C');
  for (let i = 0; i < 3; i++) sb.recordPoll(votes({ C: 4 }));
  assert.ok(sb.finalized);
  assert.is(sb.preference, 'C');
});

const flake = suite('snowflake');

flake('switches preference on any successful poll for another choice and resets confidence', () => {
  const sf = new Snowflake(P, 'A');
  sf.add('B');
  for (let i = 0; i < 5; i++) sf.recordPoll(votes({ A: 15 }));
  assert.is(sf.confidence, 5);
  sf.recordPoll(votes({ B: 15 }));
  assert.is(sf.preference, 'B');
  assert.is(sf.confidence, 1);
  sf.recordPoll(votes({ B: 14 }));
  assert.is(sf.confidence, 0);
  assert.is(sf.preference, 'B');
});

flake('virtuous vs rogue thresholds', () => {
  const v = new Snowflake({ alpha: 1, betaVirtuous: 2, betaRogue: 3 }, 'A');
  v.recordPoll(votes({ A: 1 }));
  v.recordPoll(votes({ A: 1 }));
  assert.ok(v.finalized);
  const r = new Snowflake({ alpha: 1, betaVirtuous: 2, betaRogue: 3 }, 'A');
  r.add('B');
  r.recordPoll(votes({ A: 1 }));
  r.recordPoll(votes({ A: 1 }));
  assert.not.ok(r.finalized);
  r.recordPoll(votes({ A: 1 }));
  assert.ok(r.finalized);
});

flake('topChoice: most votes among known choices; first seen wins a tie; non-positive counts ignored', () => {
  const choices = new Set(['A', 'B', 'C']);
  assert.equal(topChoice(choices, votes({ A: 2, B: 5, C: 5 })), { choice: 'B', count: 5 });
  assert.equal(topChoice(choices, votes({ Z: 9, C: 1 })), { choice: 'C', count: 1 });
  assert.is(topChoice(choices, votes({ A: 0, B: -3, C: Number.NaN })), undefined);
  assert.is(topChoice(choices, new Map()), undefined);
});

test.run();
flake.run();
