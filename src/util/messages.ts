/** The content of the last user message of a chat ('' when there is none). */
export function lastUserMessage(messages: ReadonlyArray<{ role: string; content: string }>): string {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === 'user') return messages[i]!.content;
  return '';
}

/** The content of the first user message of a chat ('' when there is none): what a conversation was opened with. */
export function firstUserMessage(messages: ReadonlyArray<{ role: string; content: string }>): string {
  for (const m of messages) if (m.role === 'user') return m.content;
  return '';
}
