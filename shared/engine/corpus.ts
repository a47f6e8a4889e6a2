/**
 * The text the reference model is estimated from: short conversations written for Loom itself (no downloaded data).
 * Each entry becomes one ChatML exchange, so the model learns the turn markers, when to close a turn, and the shape of
 * a reasoning section.
 */

/** One training conversation: a user turn, an optional reasoning section and the assistant's answer. */
export type CorpusExchange = { user: string; reasoning?: string; answer: string }

/** The shipped conversations. */
export const CORPUS: readonly CorpusExchange[] = [
  {
    user: 'What is Loom?',
    reasoning: 'The user asks about the platform itself. I should describe what it serves and how it is built.',
    answer:
      'Loom is an open platform for serving language models and tracing the calls made to them. It speaks the same protocol as the popular model servers, so existing clients work without changes.',
  },
  {
    user: 'Tell me a short story.',
    answer:
      'Once upon a time, a weaver lived at the edge of a quiet river. Every morning she set up her loom and wove a new pattern from the colours of the water. The village came to watch, and each pattern told a story about the day before.',
  },
  {
    user: 'How does the weaver choose her colours?',
    reasoning: 'This continues the story. The answer should stay in the same gentle voice and explain the idea.',
    answer:
      'She watches the river at dawn. When the water is calm, she picks soft blues and greys. When the wind rises, she adds threads of gold and deep green, because the river is never the same twice.',
  },
  {
    user: 'Explain what a token is.',
    answer:
      'A token is a small piece of text that a model reads and writes. This model uses single bytes as tokens, with a few special markers that open and close each turn of a conversation.',
  },
  {
    user: 'Why is the sky blue?',
    reasoning:
      'Light from the sun contains every colour. Air scatters short wavelengths more than long ones, so blue light reaches the eye from every direction.',
    answer:
      'Sunlight is a mix of all colours. The air scatters blue light much more than red light, so when you look up, blue light arrives from every part of the sky.',
  },
  {
    user: 'Give me a tip for writing clear code.',
    answer:
      'Name things for what they mean, keep each function small, and write the test first. A reader should understand a module from its names before reading a single line of its body.',
  },
  {
    user: 'What is the capital of France?',
    answer: 'The capital of France is Paris.',
  },
  {
    user: 'Count from one to five.',
    answer: 'One, two, three, four, five.',
  },
  {
    user: 'Describe a garden in the morning.',
    answer:
      'The garden wakes slowly. Dew rests on the leaves, a blackbird sings from the old apple tree, and the first light turns the path from grey to warm brown. The air smells of wet earth and mint.',
  },
  {
    user: 'How should I plan a long walk?',
    reasoning:
      'A good plan covers the route, the weather, water and food, and a way back. I will list the steps in order.',
    answer:
      'Pick a route that fits your time and check the weather the day before. Pack water, a snack and a light jacket. Tell someone where you are going, start early, and turn back at the halfway point if you feel tired.',
  },
  {
    user: 'Reply in JSON with a name and an age.',
    answer: '{"name": "Ada", "age": 36}',
  },
  {
    user: 'List three fruits as a JSON array.',
    answer: '["apple", "pear", "plum"]',
  },
  {
    user: 'Describe a city as a JSON object.',
    answer: '{"city": "Lyon", "country": "France", "population": 522000, "river": true, "tags": ["silk", "food"]}',
  },
  {
    user: 'Is the answer yes or no?',
    answer: 'Yes. The answer is yes, because the question leaves room for only one reading.',
  },
  {
    user: 'What does a tracing system record?',
    reasoning: 'A trace links the calls of one task. Each call has inputs, outputs, timing and a parent.',
    answer:
      'A tracing system records each call an application makes: its inputs, its outputs, when it started and ended, and which call started it. Together the calls form a tree that shows how a task was done.',
  },
  {
    user: 'Write a haiku about rain.',
    answer: 'Soft rain on the roof,\nthe kettle begins to sing,\nthe cat dreams of fish.',
  },
  {
    user: 'How do I make tea?',
    answer:
      'Boil fresh water, warm the pot, and add one spoon of leaves for each cup. Pour the water, wait three to five minutes, then pour the tea through a strainer. Add milk or lemon if you like.',
  },
  {
    user: 'What is a good way to learn a language?',
    reasoning:
      'Learning works best with daily practice, real conversations and patience. The answer should be practical.',
    answer:
      'Practise a little every day. Read simple stories, listen to people speak, and try to talk as early as you can. Mistakes are part of learning, so keep going and be patient with yourself.',
  },
  {
    user: 'Summarise the weaver story in one sentence.',
    answer: 'A weaver turns the changing river into patterns that tell the village about each day.',
  },
  {
    user: 'Say hello.',
    answer: 'Hello! How can I help you today?',
  },
  {
    user: 'Thank you.',
    answer: 'You are welcome. Let me know if there is anything else I can do.',
  },
]

/** Loose prose the model also reads, so free text has a wider range of words. */
export const PROSE = `The river ran past the mill and under the stone bridge, where children dropped leaves to watch them race.
In the evening the lamps were lit one by one, and the streets filled with the smell of bread and smoke.
A good tool is one you forget while you use it. It does the work and stays out of the way.
The model reads the text one byte at a time and guesses what comes next from what it has seen before.
Every answer is short, clear and kind. When a question is hard, the answer says what is known and what is not.
The old map showed roads that no longer existed, but the hills and the rivers were still in the same places.
Numbers such as 1, 2, 3, 10, 42, 100 and 2026 appear in plain sentences, and so do dates like 2026-11-22.
The platform keeps a record of every request, the time it took, and the tokens it used.`
