import { describe, expect, it } from 'vitest';
import { closest, editDistance } from './suggest.js';

describe('did you mean', () => {
  it.each([
    ['todso', 'todos', 1], // a swap of neighbours is one edit
    ['todo', 'todos', 1],
    ['tdos', 'todos', 1],
    ['users', 'todos', 4],
    ['', 'abc', 3],
  ])('editDistance(%s, %s) = %i', (a, b, d) => {
    expect(editDistance(a, b)).toBe(d);
    expect(editDistance(b, a)).toBe(d);
  });

  it.each([
    ['todo', ['todos', 'users'], 'todos'],
    ['Todos', ['todos', 'tods'], 'todos'], // another case wins over any edit
    ['user_idd', ['user_id', 'title'], 'user_id'],
    ['x', ['todos', 'y'], 'y'], // a one-letter name still gets a one-letter neighbour
    ['profile', ['todos', 'users'], null], // nothing close: no guess
    ['todos', ['todos'], null], // the name itself is no suggestion
    ['ab', ['abcdef'], null],
  ] as const)('closest(%s, %j) = %s', (name, candidates, meant) => {
    expect(closest(name, candidates)).toBe(meant);
  });
});
