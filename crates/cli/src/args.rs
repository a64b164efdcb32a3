//! The operator commands' arguments, as clap reads them.

use clap::{Args, Subcommand, ValueEnum};
use holdfast_domain::mode::{KeyType, Mode};

#[derive(Debug, Subcommand)]
pub enum ComplianceCommand {
    /// Mark forms past due `overdue` and issue each merchant's new yearly form, as of `--as-of`
    /// (default: now), as the hourly retention task does.
    Maintain {
        /// RFC 3339 time to act as of.
        #[arg(long)]
        as_of: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum LedgerCommand {
    /// Recompute every balance from its entries and check every journal sums to zero, that
    /// each money-moving transaction has its journal, and no other; exits 1 on any difference.
    Verify,
    /// Run settlement once, now: every charge whose plan's delay has passed moves from pending
    /// to available (the worker does this on its schedule).
    Settle {
        /// Read every charge ever posted, not only those since the oldest the last run left
        /// pending: for charges `ledger verify` names as past due.
        #[arg(long)]
        from_start: bool,
    },
    /// Run the payout rails once, now (the worker does this on its schedule): the schedules due
    /// today pay out, test mode's sandbox bank pays or returns each payout at once, by its
    /// account number, and the live rail (when `HOLDFAST_ACH_OUTBOX` is set) writes the pending
    /// live payouts into a NACHA file, reads the bank's return files and pays the payouts whose
    /// file has settled.
    PayOut,
}

#[derive(Debug, Subcommand)]
pub enum LoanCommand {
    /// Review the loans once, now (each payout run does this first): offers past their end
    /// expire, accepted loans' advances are paid out, loans being repaid go past due or back
    /// by their 30-day minimums.
    Review,
    /// Write off what a paid-out loan still owes, against the platform's funding
    /// (`loan.charged_off`); it stops being withheld from the merchant's settlements.
    ChargeOff {
        /// The loan (loan_…).
        loan: String,
        #[command(flatten)]
        platform: PlatformArg,
        /// The loan's mode.
        #[arg(long, value_enum)]
        mode: ModeArg,
    },
}

#[derive(Debug, Subcommand)]
pub enum BoardingCommand {
    /// Approve a submitted form: its merchant may take live payments.
    Approve(BoardingTarget),
    /// Decline a submitted form.
    Decline {
        #[command(flatten)]
        target: BoardingTarget,
        /// Why, in words the merchant will read.
        #[arg(long)]
        reason: String,
    },
    /// Open a submitted form again for the named fields.
    RequestInformation {
        #[command(flatten)]
        target: BoardingTarget,
        /// What is needed, in words the merchant will read.
        #[arg(long)]
        reason: String,
        /// The fields to answer again, comma-separated (for example `website,taxId`).
        #[arg(long, value_delimiter = ',', required = true)]
        fields: Vec<String>,
    },
}

#[derive(Debug, Args)]
pub struct BoardingTarget {
    #[command(flatten)]
    pub platform: PlatformArg,
    /// The form's id (bf_…).
    pub form_id: String,
}

#[derive(Debug, Subcommand)]
pub enum WebhookCommand {
    /// Turn a subscription on; resets its failure counter to 0.
    Enable {
        #[arg(long)]
        platform: String,
        webhook_id: String,
    },
    /// Turn a subscription off; its failure counter stays as it is.
    Disable {
        #[arg(long)]
        platform: String,
        webhook_id: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum DeliveryCommand {
    /// A subscription's delivery records, newest first.
    List {
        #[arg(long)]
        platform: String,
        #[arg(long)]
        webhook: String,
        #[arg(long, default_value_t = 20)]
        limit: u32,
    },
    /// Queue a transaction notification again, with a new id, to the subscription's current URL.
    Resend {
        #[arg(long)]
        platform: String,
        notification_id: String,
    },
    /// Archive records older than 15 days before `--as-of` (default: now), as the hourly
    /// retention task does.
    Archive {
        /// RFC 3339 time to count the 15 days back from.
        #[arg(long)]
        as_of: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum PlatformCommand {
    /// Create a platform, its owner user and its two default test keys (values shown once).
    Create {
        #[arg(long)]
        name: String,
        #[arg(long)]
        owner_email: String,
    },
    /// List every platform.
    List,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RoleArg {
    Admin,
    Viewer,
}

impl From<RoleArg> for holdfast_domain::user::Role {
    fn from(role: RoleArg) -> Self {
        match role {
            RoleArg::Admin => Self::Admin,
            RoleArg::Viewer => Self::Viewer,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum KeyTypeArg {
    Public,
    Private,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ModeArg {
    Test,
    Live,
}

impl From<KeyTypeArg> for KeyType {
    fn from(arg: KeyTypeArg) -> Self {
        match arg {
            KeyTypeArg::Public => KeyType::Public,
            KeyTypeArg::Private => KeyType::Private,
        }
    }
}

impl From<ModeArg> for Mode {
    fn from(arg: ModeArg) -> Self {
        match arg {
            ModeArg::Test => Mode::Test,
            ModeArg::Live => Mode::Live,
        }
    }
}

#[derive(Debug, Args)]
pub struct PlatformArg {
    /// The platform id (pfm_…).
    #[arg(long)]
    pub platform: String,
}

#[derive(Debug, Args)]
pub struct KeyTarget {
    #[command(flatten)]
    pub platform: PlatformArg,
    /// The key id (key_…), as `keys list` shows it.
    pub key_id: String,
}

#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Generate a key; its full value is printed once and never again.
    Create {
        #[command(flatten)]
        platform: PlatformArg,
        /// 3 to 25 characters.
        #[arg(long)]
        name: String,
        #[arg(long = "type", value_enum)]
        key_type: KeyTypeArg,
        #[arg(long, value_enum)]
        mode: ModeArg,
        /// The user generating the key (default: the platform owner).
        #[arg(long)]
        user: Option<String>,
    },
    /// List keys (never their values).
    List {
        #[command(flatten)]
        platform: PlatformArg,
    },
    /// Rename a key.
    Rename {
        #[command(flatten)]
        target: KeyTarget,
        #[arg(long)]
        name: String,
    },
    /// Make a key usable again.
    Activate(KeyTarget),
    /// Make a key refused with 401 until activated again.
    Deactivate(KeyTarget),
    /// Delete a key permanently.
    Delete(KeyTarget),
}

#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Add a user to a platform; they sign in once they set a password (see `invite`).
    Create {
        #[command(flatten)]
        platform: PlatformArg,
        #[arg(long)]
        email: String,
        /// `admin` may do everything; `viewer` reads everything but secrets.
        #[arg(long, value_enum, default_value_t = RoleArg::Viewer)]
        role: RoleArg,
    },
    /// Print a one-time link (valid 24 hours) that sets the user's dashboard password; with
    /// `HOLDFAST_SMTP_URL` set, also email it to the user (through the outbox `serve` sends).
    Invite {
        #[command(flatten)]
        platform: PlatformArg,
        user_id: String,
    },
    /// Set a user's dashboard password, read from standard input; ends their sessions.
    SetPassword {
        #[command(flatten)]
        platform: PlatformArg,
        user_id: String,
        /// Read the password from standard input (one line), never from the command line.
        #[arg(long, required = true)]
        password_stdin: bool,
    },
    /// List a platform's users.
    List {
        #[command(flatten)]
        platform: PlatformArg,
    },
    /// Delete a user (not the owner). Keys and subscriptions they created keep working.
    Delete {
        #[command(flatten)]
        platform: PlatformArg,
        user_id: String,
    },
}
