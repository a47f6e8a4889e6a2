import { describe, expect, it } from 'vitest'
import { CHATML_TEMPLATE, renderChat } from '#shared/engine/chat-template'
import { buildPrompt } from '#shared/engine/prompt'
import { engineSettings, referenceCatalogModel } from '#shared/engine/settings'
import { decode, TOKEN } from '#shared/engine/tokenizer'
import { BadRequestError } from '#shared/errors/http-error'
import type { ChatCompletionRequest } from '#shared/schemas/chat-completion'

const settings = engineSettings(referenceCatalogModel())
const user = (content: string) => ({ role: 'user' as const, content })

describe('chat template', () => {
  it('renders ChatML with a generation prompt that closes an empty reasoning section', () => {
    // Act
    const text = renderChat({
      template: CHATML_TEMPLATE,
      messages: [user('Hi')],
      addGenerationPrompt: true,
      continueFinalMessage: false,
    })

    // Assess
    expect(text).toBe('<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think></think>\n\n')
  })

  it('leaves the reasoning section open when reasoning_effort is set', () => {
    // Act
    const prompt = buildPrompt({ messages: [user('Hi')], reasoning_effort: 'low' }, settings)

    // Assess
    expect(decode(prompt.ids, { skipSpecialTokens: false, spacesBetweenSpecialTokens: false })).toMatch(
      /assistant\n<think>\n$/,
    )
    expect(prompt.reasoningOpen).toBe(true)
  })

  it('passes tools, documents and chat_template_kwargs to the template', () => {
    // Prepare
    const request: ChatCompletionRequest = {
      messages: [user('Q')],
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }],
      documents: [{ title: 'Rivers', text: 'Water flows.' }],
      chat_template_kwargs: { enable_thinking: true },
    }

    // Act
    const text = decode(buildPrompt(request, settings).ids, {
      skipSpecialTokens: false,
      spacesBetweenSpecialTokens: false,
    })

    // Assess
    expect(text).toContain('{"name": "lookup", "parameters": {"type": "object"}}')
    expect(text).toContain('title: Rivers\ntext: Water flows.')
    expect(text.endsWith('<think>\n')).toBe(true)
  })

  it('continues the final message and answers with its role when add_generation_prompt is false', () => {
    // Act
    const prompt = buildPrompt(
      {
        messages: [user('Hi'), { role: 'assistant', content: 'Once upon' }],
        add_generation_prompt: false,
        continue_final_message: true,
      },
      settings,
    )

    // Assess
    expect(decode(prompt.ids)).toMatch(/assistant\nOnce upon$/)
    expect(prompt.role).toBe('assistant')
  })

  it('renders a custom role (vLLM accepts any role string) as ChatML renders every role', () => {
    // Act
    const prompt = buildPrompt(
      {
        messages: [user('Weather?'), { role: 'ipython', content: [{ type: 'text', text: '{"temp": 21}' }] }],
      },
      settings,
    )

    // Assess
    expect(decode(prompt.ids, { skipSpecialTokens: false, spacesBetweenSpecialTokens: false })).toBe(
      '<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>ipython\n{"temp": 21}<|im_end|>\n' +
        '<|im_start|>assistant\n<think></think>\n\n',
    )
    expect(prompt.role).toBe('assistant')
  })

  it('answers with the custom role of the final message it continues', () => {
    // Act
    const prompt = buildPrompt(
      {
        messages: [user('Hi'), { role: 'ipython', content: 'partial' }],
        add_generation_prompt: false,
        continue_final_message: true,
      },
      settings,
    )

    // Assess
    expect(decode(prompt.ids)).toMatch(/ipython\npartial$/)
    expect(prompt.role).toBe('ipython')
  })

  it("refuses continue_final_message with a generation prompt, as Hugging Face's apply_chat_template does", () => {
    // Act
    const act = () =>
      buildPrompt(
        { messages: [user('Hi'), { role: 'assistant', content: 'Once' }], continue_final_message: true },
        settings,
      )

    // Assess
    expect(act).toThrow(BadRequestError)
    expect(act).toThrow(/^continue_final_message and add_generation_prompt are not compatible\. /)
  })

  it('adds bos only with add_special_tokens', () => {
    // Act
    const without = buildPrompt({ messages: [user('Hi')] }, settings)
    const withBos = buildPrompt({ messages: [user('Hi')], add_special_tokens: true }, settings)

    // Assess
    expect(withBos.ids).toEqual([TOKEN.bos, ...without.ids])
  })

  it('renders a request template and reports rendering errors as 400', () => {
    // Act
    const custom = buildPrompt(
      { messages: [user('Hi')], chat_template: '{{ messages[0].content | upper }}!' },
      settings,
    )
    const broken = () => buildPrompt({ messages: [user('Hi')], chat_template: '{% if %}' }, settings)

    // Assess
    expect(decode(custom.ids)).toBe('HI!')
    expect(broken).toThrow(BadRequestError)
  })

  it('refuses a model without a template when the request brings none', () => {
    // Prepare
    const bare = engineSettings(referenceCatalogModel({ hasChatTemplate: false }))

    // Act
    const act = () => buildPrompt({ messages: [user('Hi')] }, bare)

    // Assess
    expect(act).toThrow('default chat template is no longer allowed')
  })

  it('refuses a model whose engine settings declare no template', () => {
    // Prepare
    const bare = engineSettings(
      referenceCatalogModel({ backend: { kind: 'reference', settings: { chatTemplate: null } } }),
    )

    // Act
    const act = () => buildPrompt({ messages: [user('Hi')] }, bare)
    const supplied = buildPrompt({ messages: [user('Hi')], chat_template: '{{ messages[0].content }}' }, bare)

    // Assess
    expect(act).toThrow(BadRequestError)
    expect(decode(supplied.ids)).toBe('Hi')
  })

  it('truncates the prompt to its last tokens and rejects an empty prompt', () => {
    // Act
    const truncated = buildPrompt({ messages: [user('Hello there')], truncate_prompt_tokens: 5 }, settings)
    const empty = () => buildPrompt({ messages: [user('x')], chat_template: '' }, settings)

    // Assess
    expect(truncated.ids).toHaveLength(5)
    expect(empty).toThrow('The decoder prompt cannot be empty')
  })
})
