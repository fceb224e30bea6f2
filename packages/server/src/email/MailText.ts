/**
 * The text of the channel's mails: plain text, short, every link on its own
 * line, and why the mail came (with where to turn it off). Nothing here is
 * HTML: a mail's text is shown as it is, so nothing needs escaping.
 */
import type { Interaction } from "@herald/api"

export interface AnswerLink {
  readonly label: string
  readonly url: string
}

const footer = (publicUrl: string) => [
  "",
  "Each link opens a page where you confirm; nothing happens until you press its button.",
  `You get this mail because the e-mail channel is on in your Herald settings: ${publicUrl}/email`,
  ""
]

/** The answers a prompt's mail offers, one link each: its kind's two, or each choice and a free reply. */
export const answersOf = (kind: Interaction["kind"], choices: ReadonlyArray<string>): ReadonlyArray<{ readonly label: string; readonly arg: string }> => {
  switch (kind) {
    case "approval":
      return [{ label: "Approve", arg: "approved" }, { label: "Deny", arg: "denied" }]
    case "yes_no":
      return [{ label: "Yes", arg: "yes" }, { label: "No", arg: "no" }]
    case "reply":
      return [...choices.map((c, i) => ({ label: `Reply "${c}"`, arg: `c${i}` })), { label: "Write a reply", arg: "r" }]
  }
}

export const promptMail = (
  publicUrl: string,
  p: { readonly title: string; readonly prompt: string; readonly sourceName: string; readonly expiresAt: string },
  links: ReadonlyArray<AnswerLink>
) => ({
  subject: `Waiting for your answer: ${p.title}`.slice(0, 200),
  body: [
    `${p.sourceName} asked you on Herald and is still waiting:`,
    "",
    p.title,
    "",
    p.prompt,
    "",
    "Answer:",
    ...links.flatMap((l) => [`${l.label}:`, l.url, ""]),
    `The links work once and end with the prompt, at ${p.expiresAt}.`,
    ...footer(publicUrl)
  ].join("\n")
})

export const pageMail = (
  publicUrl: string,
  p: { readonly title: string; readonly body: string | null; readonly groupName: string },
  acknowledge: string
) => ({
  subject: `Page: ${p.title}`.slice(0, 200),
  body: [
    `You are paged by the on-call group ${p.groupName}, and no phone of yours can take it:`,
    "",
    p.title,
    ...(p.body === null ? [] : ["", p.body]),
    "",
    "Acknowledge:",
    acknowledge,
    "",
    "The link works once, while the page is open (at most 24 hours).",
    ...footer(publicUrl)
  ].join("\n")
})

export const verificationMail = (publicUrl: string, name: string, url: string) => ({
  subject: "Confirm your address for Herald's e-mail channel",
  body: [
    `Hello ${name},`,
    "",
    "You turned on Herald's e-mail channel: prompts waiting for your answer and pages can reach you here, with",
    "links that answer for you. Confirm that this address is yours:",
    "",
    url,
    "",
    "The link works for 24 hours. If you did not ask for this, ignore this mail: nothing is sent here until the",
    `address is confirmed. Settings: ${publicUrl}/email`,
    ""
  ].join("\n")
})
