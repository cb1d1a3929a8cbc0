/**
 * The two SES exports the email adapter uses, as one module to import lazily: a dynamic import of
 * the package itself would keep every command of SESv2 in the bundle (a namespace import cannot be
 * tree-shaken); a dynamic import of this module keeps only these.
 */
export { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
