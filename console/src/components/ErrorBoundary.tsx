import { Component, type ComponentChildren } from 'preact'

type Props = { resetKey: string; children: ComponentChildren }
type State = { error: Error | undefined }

/**
 * Catches an error thrown while rendering the page inside and shows it as an alert. Without it the error escapes
 * Preact's render and leaves its tree half-updated, so every later route draws over the broken page until a reload.
 * A new `resetKey` (the route) renders the page again.
 */
export class ErrorBoundary extends Component<Props, State> {
  override state: State = { error: undefined }

  static override getDerivedStateFromError(error: unknown): State {
    return { error: error instanceof Error ? error : new Error(String(error)) }
  }

  override componentDidCatch(error: unknown): void {
    // The alert shows the message only; the stack goes to the browser's console for whoever debugs it.
    console.error(error)
  }

  override componentDidUpdate(previous: Readonly<Props>): void {
    if (previous.resetKey !== this.props.resetKey && this.state.error !== undefined) this.setState({ error: undefined })
  }

  render() {
    const { error } = this.state
    if (error === undefined) return this.props.children
    return (
      <div class="error" role="alert" data-testid="page-error">
        <p>This page could not be shown: {error.message}</p>
        <p>Open another page, or reload to try again.</p>
      </div>
    )
  }
}
