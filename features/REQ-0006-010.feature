@REQ-0006-010
Feature: REQ-0006-010 Stream breaks become ProviderTimeoutException and are retried
  Seed 000, REQ-0006-010: on EOF/connection reset while reading the stream the provider "不直接
  抛出裸 EOFException，而应包装为 ProviderTimeoutException（或可识别的 ProviderException）".
  Acceptance: "断流类异常会被分类为 provider phase 的 runtime.error（error_type 为
  ProviderTimeoutException 或同类），且进入重试逻辑". The background names the causes: the SSE
  stream "被中间链路/系统回收/对端提前关闭导致 EOF/connection reset" — so a stream that ends
  without its terminal event (the peer closing early) and a stream that goes silent until the
  client's timeout are breaks too. The literal name ProviderTimeoutException is preferred; any
  recognisable provider exception ("或同类") meets the requirement.

  @wire @events
  Scenario Outline: A stream broken by <fault> is retried and recorded as a provider error
    Seed 000, line 68: "单测/可控模拟：断流类异常会被分类为 `provider` phase 的 `runtime.error`（error_type 为 ProviderTimeoutException 或同类），且进入重试逻辑。"
    Given the provider breaks the stream with "<fault>" before any output on attempt 1
    And attempt 2 succeeds
    When the implementation streams one model call
    Then the server sees exactly 2 attempts
    And the result is a success
    And the retries are recorded as provider errors
    And ideally the retries are recorded as "ProviderTimeoutException"

    Examples:
      | fault    |
      | eof      |
      | reset    |
      | truncate |
      | stall    |

  @wire @should
  Scenario: A stream that turns to garbage is retried
    Seed 000, line 26: "**瞬断/断流**：SSE 流被中间链路/系统回收/对端提前关闭导致 EOF/connection reset；"
    Given the provider breaks the stream with "garbage" before any output on attempt 1
    And attempt 2 succeeds
    When the implementation streams one model call
    Then the server sees exactly 2 attempts
    And the result is a success

  @wire
  Scenario: A reset right after the headers, before the first event, is retried
    Seed 000, line 51: "`EOFException` / `SocketException(ECONNRESET)` 等断流类：在 provider 层归一为 `ProviderTimeoutException`（或等价的 `ProviderException`）以进入统一重试逻辑。"
    Given the provider resets the stream right after the headers on attempt 1
    And attempt 2 succeeds
    When the implementation streams one model call
    Then the server sees exactly 2 attempts
    And the result is a success

  @wire @events
  Scenario Outline: A stream that keeps breaking by <fault> ends in a provider-phase runtime.error
    Seed 000, line 68: "单测/可控模拟：断流类异常会被分类为 `provider` phase 的 `runtime.error`（error_type 为 ProviderTimeoutException 或同类），且进入重试逻辑。"
    Given the provider breaks the stream with "<fault>" before any output on every attempt
    When the implementation streams one model call
    Then the result has ok false
    And the events contain exactly 1 "runtime.error"
    And the runtime.error has phase "provider" and a provider error type
    And ideally the runtime.error has error_type "ProviderTimeoutException"

    Examples:
      | fault |
      | eof   |
      | reset |
