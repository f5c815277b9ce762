import { createSmtpNotifier } from './create-smtp-notifier';
import type { NotifierSettings, TransportDescriptor } from './notifier';

/** The SMTP pool, when SMTP_URL is set. */
export const smtpTransport: TransportDescriptor = {
  name: 'smtp',
  selects: (settings) => settings.smtp !== undefined,
  create: (settings, io) => createSmtpNotifier(smtpOf(settings), io),
  describeStart: (settings) => `SMTP ${new URL(smtpOf(settings).url).host}`,
  describeVerified(settings) {
    const smtp = smtpOf(settings);
    const login = smtp.oauth2 ? ' and the XOAUTH2 login' : smtp.user ? ' and the login' : '';
    return `SMTP server ${new URL(smtp.url).host} accepted the connection${login}.`;
  },
};

function smtpOf(settings: NotifierSettings) {
  if (!settings.smtp) throw new Error('the SMTP transport was chosen without SMTP settings');
  return settings.smtp;
}
